"""aimrepro.records.crate: a Provenance Run Crate of a lineage, written and read back."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from rocrate.rocrate import ROCrate

from aimrepro.records import crate as rcrate
from aimrepro.records.sidecars import write_sidecar

from conftest import REPO, sha256

T0 = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.timezone.utc)
T1 = T0 + dt.timedelta(seconds=2)
PUBLISHED = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)


def build_repository(root: Path) -> Path:
    """raw.txt -> results/data.csv -> results/curve.csv -> figures/fig.pdf (+ .png), with the repository's files."""
    root.mkdir(parents=True)
    with contextlib.chdir(root):
        for name in ("LICENSE", "CITATION.cff", "Snakefile", "config.yaml"):
            shutil.copy(REPO / name, name)
        Path("code").mkdir()
        Path("code/science.py").write_text("pass\n")
        Path("code/figure.py").write_text("pass  # draws\n")
        Path("raw.txt").write_text("raw\n")
        Path("results").mkdir()
        Path("results/data.csv").write_text("a\n1\n")
        write_sidecar("results/data.csv", rule="data", params={"wildcards": {"seed": "3"}},
                      inputs=["raw.txt"], code=["code/science.py"], diagnostics={}, seed=3,
                      started=T0, ended=T1, config_hash="c" * 64)
        Path("results/curve.csv").write_text("x\n1\n")
        write_sidecar("results/curve.csv", rule="curve",
                      params={"wildcards": {"rho": "0.5"}, "solver": {"tol": 1e-9}},
                      inputs=["results/data.csv"], code=["code/science.py"],
                      diagnostics={"converged": True}, started=T0, ended=T1, config_hash="c" * 64)
        Path("figures").mkdir()
        for ext in ("pdf", "png"):
            Path(f"figures/fig.{ext}").write_bytes(ext.encode())
        write_sidecar(["figures/fig.pdf", "figures/fig.png"], rule="fig", params={},
                      inputs=["results/curve.csv"], code=["code/figure.py", "code/science.py"],
                      diagnostics={}, started=T0, ended=T1, config_hash="c" * 64)
    return root


def graph_of(metadata: dict) -> dict[str, dict]:
    return {entity["@id"]: entity for entity in metadata["@graph"]}


def ids(value) -> list[str]:
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


@pytest.fixture
def repository(tmp_path):
    return build_repository(tmp_path / "repo")


def test_each_job_is_an_action_with_its_inputs_outputs_parameters_and_code(repository, tmp_path):
    summary = rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate",
                                 published=PUBLISHED)
    assert (summary.n_jobs, summary.n_rules, summary.n_missing) == (3, 3, 0)
    metadata = json.loads((tmp_path / "crate" / "ro-crate-metadata.json").read_text())
    assert metadata["@context"] == rcrate.CONTEXT
    graph = graph_of(metadata)
    counted = Counter(t for e in metadata["@graph"] for t in rcrate._types(e))
    assert summary.entities == dict(counted) and counted["CreateAction"] == 4  # 3 jobs, the run
    assert summary.n_entities == len(metadata["@graph"]) == sum(counted.values()) - 3  # the Snakefile

    curve = graph["#job-results/curve.json"]
    assert curve["@type"] == "CreateAction" and curve["instrument"] == {"@id": "#rule-curve"}
    assert curve["startTime"] == "2026-11-30T12:00:00.000+00:00"
    assert curve["endTime"] == "2026-11-30T12:00:02.000+00:00"
    assert ids(curve["result"]) == ["results/curve.csv", "results/curve.json"]
    objects = ids(curve["object"])
    assert objects[0] == "results/data.csv"
    values = {graph[i]["name"]: graph[i] for i in objects[1:]}
    assert values["wildcards.rho"]["value"] == "0.5" and values["solver.tol"]["value"] == 1e-9
    assert values["config_hash"]["value"] == "c" * 64
    assert values["solver.tol"]["exampleOfWork"] == {"@id": "#rule-curve-param-solver.tol"}
    assert {"@id": "#rule-curve-param-solver.tol"} in graph["#rule-curve"]["input"]
    assert graph["#rule-curve"]["hasPart"] == {"@id": "code/science.py"}
    assert ids(graph["#rule-fig"]["hasPart"]) == ["code/figure.py", "code/science.py"]
    assert graph[curve["location"]["@id"]]["@type"] == "Place"
    usage = {graph[i]["propertyID"]: graph[i] for i in ids(curve["resourceUsage"])}
    assert usage["wall_seconds"]["value"] == 2.0 and usage["wall_seconds"]["unitCode"] == "SEC"

    # every file with its sha256, copied into the crate
    for name in ("results/data.csv", "results/curve.csv", "figures/fig.pdf", "code/science.py",
                 "raw.txt", "Snakefile", "config.yaml", "LICENSE", "CITATION.cff"):
        assert graph[name]["sha256"] == sha256(repository / name) == sha256(tmp_path / "crate" / name)
    assert graph["results/curve.json"]["about"] == {"@id": "results/curve.csv"}
    assert ids(graph["results/data.csv"]["exampleOfWork"]) == ["#rule-data-outputs", "#rule-curve-inputs"]


def test_the_run_its_engine_and_steps_and_the_root_from_the_repositorys_files(repository, tmp_path):
    rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate", published=PUBLISHED)
    graph = graph_of(json.loads((tmp_path / "crate" / "ro-crate-metadata.json").read_text()))
    root = graph["./"]
    assert ids(root["conformsTo"]) == [uri for uri, _, _ in rcrate.PROFILES]
    assert root["mainEntity"] == {"@id": "Snakefile"} and root["datePublished"] == "2026-12-01T00:00:00Z"
    assert root["license"] == {"@id": "https://spdx.org/licenses/MIT"}
    papers = [graph[i] for i in ids(root["citation"])]
    assert [p["@id"] for p in papers] == ["https://doi.org/10.48550/arXiv.2506.01582",
                                          "https://doi.org/10.48550/arXiv.2609.03858"]
    assert papers[0]["author"].startswith("Fabrizio Boncoraglio, Emanuele Troiani")
    workflow = graph["Snakefile"]
    assert set(workflow["@type"]) == {"File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"}
    assert ids(workflow["hasPart"]) == ["#rule-data", "#rule-curve", "#rule-fig"]  # inputs first
    assert [graph[s]["workExample"]["@id"] for s in ids(workflow["step"])] == ids(workflow["hasPart"])
    run = graph["#workflow-run"]
    assert run["instrument"] == {"@id": "Snakefile"}
    assert ids(run["result"]) == ["figures/fig.pdf", "figures/fig.png"]
    assert ids(run["object"]) == ["config.yaml", "raw.txt"]
    engine = graph["#engine-run"]
    assert engine["result"] == {"@id": "#workflow-run"} and len(ids(engine["object"])) == 3
    for control in ids(engine["object"]):
        job = graph[graph[control]["object"]["@id"]]
        step = graph[graph[control]["instrument"]["@id"]]
        assert step["workExample"] == job["instrument"]
    assert set(ids(root["mentions"])) == {"#workflow-run", "#job-results/data.json",
                                          "#job-results/curve.json", "#job-figures/fig.json"}
    assert set(ids(root["hasPart"])) == {e["@id"] for e in graph.values()
                                         if "File" in rcrate._types(e)}


def test_a_zipped_crate_holds_the_same_files(repository, tmp_path):
    directory = rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate")
    zipped = rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate.zip")
    with zipfile.ZipFile(tmp_path / "crate.zip") as archive:
        names = set(archive.namelist())
        assert json.loads(archive.read("ro-crate-metadata.json"))["@graph"][1]["@id"] == "./"
    on_disk = {str(p.relative_to(tmp_path / "crate")) for p in (tmp_path / "crate").rglob("*")
               if p.is_file()}
    assert names == on_disk and zipped.n_files == directory.n_files == len(names) - 1


def test_a_crate_is_refused_for_a_lineage_that_does_not_verify(repository, tmp_path):
    (repository / "results/curve.csv").write_text("x\n2\n")
    with pytest.raises(rcrate.CrateError, match="does not verify .* results/curve.csv: changed since use"):
        rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate")
    assert not (tmp_path / "crate").exists()
    (tmp_path / "taken").mkdir()
    with pytest.raises(rcrate.CrateError, match="exists"):
        rcrate.write_crate([repository / "raw.txt"], tmp_path / "taken")


def test_targets_of_two_working_directories_are_refused(repository, tmp_path):
    other = build_repository(tmp_path / "other")
    with pytest.raises(rcrate.CrateError, match="come from 2 working directories .* one crate per"):
        rcrate.write_crate([repository / "figures/fig.pdf", other / "results/curve.csv"], tmp_path / "crate")
    assert not (tmp_path / "crate").exists()
    # two targets of one working directory make one crate
    rcrate.write_crate([repository / "figures/fig.pdf", repository / "results/curve.csv"], tmp_path / "crate")


def test_a_missing_temporary_input_is_described_and_a_reused_one_says_where_it_was_made(
        repository, tmp_path):
    (repository / "raw.txt").unlink()  # as a temporary dataset is, once used
    other = tmp_path / "other"  # the curve was made in another clone and reused from a cache
    record = json.loads((repository / "results/curve.json").read_text())
    record["workdir"] = str(other)
    (repository / "results/curve.json").write_text(json.dumps(record))
    summary = rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate")
    graph = graph_of(json.loads((tmp_path / "crate" / "ro-crate-metadata.json").read_text()))
    assert summary.n_missing == 1 and not (tmp_path / "crate" / "raw.txt").exists()
    recorded = json.loads((repository / "results/data.json").read_text())["inputs"]["raw.txt"]
    assert graph["raw.txt"]["sha256"] == recorded and "Not included" in graph["raw.txt"]["description"]
    assert "reused here from another working directory" in graph["#job-results/curve.json"]["description"]


def test_rocrate_reads_the_crate_back(repository, tmp_path):
    rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate")
    crate = ROCrate(tmp_path / "crate")
    assert crate.mainEntity.id == "Snakefile"
    actions = [e for e in crate.get_entities() if e.type == "CreateAction"]
    assert sorted(a.id for a in actions) == ["#job-figures/fig.json", "#job-results/curve.json",
                                             "#job-results/data.json", "#workflow-run"]
    assert crate.root_dataset["license"].id == "https://spdx.org/licenses/MIT"


def test_cli_provenance_crate(repository, tmp_path, monkeypatch, capsys):
    from aimrepro.cli import main

    monkeypatch.chdir(repository)
    assert main(["provenance", "--crate", str(tmp_path / "c.zip"), "figures/fig.pdf",
                 "results/data.csv"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{tmp_path / 'c.zip'}: 3 jobs of 3 rules, ") and "CreateAction" in out
    with pytest.raises(SystemExit) as refused:  # a crate is not overwritten
        main(["provenance", "--crate", str(tmp_path / "c.zip"), "figures/fig.pdf"])
    assert refused.value.code == 2 and "exists" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["provenance", "--crate", str(tmp_path / "e"), "results"])  # files, not directories
    assert "--crate takes existing result or figure files" in capsys.readouterr().err
    Path("results/data.csv").write_text("a\n2\n")
    assert main(["provenance", "--crate", str(tmp_path / "d"), "figures/fig.pdf"]) == 1
    assert "does not verify" in capsys.readouterr().err and not (tmp_path / "d").exists()


def test_a_missing_code_file_forbids_a_crate(repository, tmp_path):
    (repository / "code/figure.py").unlink()
    with pytest.raises(rcrate.CrateError, match="figures/fig.pdf: code code/figure.py: missing"):
        rcrate.write_crate([repository / "figures/fig.pdf"], tmp_path / "crate")
    assert list(tmp_path.iterdir()) == [repository]  # nothing half-written
