"""aimrepro.records: atomic writes, tables, sidecars, lineage (docs/design.md "Provenance sidecar")."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

import aimrepro
from aimrepro.records import files
from aimrepro.records import lineage
from aimrepro.records import logs
from aimrepro.records import sidecars
from aimrepro.records import tables

from conftest import git, sha256

T0 = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.timezone.utc)
T1 = T0 + dt.timedelta(seconds=2.5)


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp" in p.name)


# --- atomic writes ---------------------------------------------------------------


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with files.atomic_write(target) as handle:
        handle.write("new")
    assert target.read_text() == "new"
    assert leftovers(target.parent) == []


def test_atomic_write_failure_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="boom"):
        with files.atomic_write(target) as handle:
            handle.write("half-writ")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_atomic_write_failure_creates_nothing(tmp_path):
    target = tmp_path / "never.txt"
    with pytest.raises(KeyError):
        with files.atomic_write(target, "wb") as handle:
            handle.write(b"x")
            raise KeyError("stop")
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_keeps_suffix_and_is_readable_by_others(tmp_path):
    target = tmp_path / "figure.pdf"
    with files.atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".pdf" and tmp != target
        tmp.write_bytes(b"%PDF")
    assert target.read_bytes() == b"%PDF"
    # mkstemp makes 0600 files; results must get ordinary permissions.
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~files._current_umask()


def test_atomic_write_rejects_append_mode(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        with files.atomic_write(tmp_path / "x", "a"):
            pass


# --- hashes and times ------------------------------------------------------------


def test_config_hash_is_canonical():
    a = {"scale": "quick", "paper1": {"rhos": [0.1, 0.2], "T": 2}}
    b = {"paper1": {"T": 2, "rhos": [0.1, 0.2]}, "scale": "quick"}
    assert sidecars.config_hash(a) == sidecars.config_hash(b)
    assert len(sidecars.config_hash(a)) == 64
    assert sidecars.config_hash(a) != sidecars.config_hash({**a, "scale": "paper"})
    assert sidecars.config_hash({"x": [0.1, 0.2]}) != sidecars.config_hash({"x": [0.2, 0.1]})


def test_format_timestamp_is_iso8601_utc():
    text = sidecars.format_timestamp(T1)
    assert text == "2026-11-30T12:00:02.500Z"
    assert dt.datetime.fromisoformat(text.replace("Z", "+00:00")) == T1
    with pytest.raises(ValueError, match="timezone"):
        sidecars.format_timestamp(dt.datetime(2026, 1, 1))


def test_file_sha256(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert files.file_sha256(path) == hashlib.sha256(b"abc").hexdigest()


# --- git state -------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_state_reports_commit_and_dirty_flag(tmp_path):
    git(tmp_path, "init", "-q")
    assert sidecars.git_state(tmp_path) == {"commit": "unknown", "dirty": None}  # no commit yet
    (tmp_path / "a.py").write_text("x = 1\n")
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-qm", "one")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert sidecars.git_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "a.py").write_text("x = 2\n")
    assert sidecars.git_state(tmp_path) == {"commit": head, "dirty": True}


def test_git_state_outside_a_repository(tmp_path):
    assert sidecars.git_state(tmp_path / "missing-dir") == {"commit": "unknown", "dirty": None}


# --- sidecars --------------------------------------------------------------------


def test_sidecar_path_is_same_directory_same_stem():
    assert sidecars.sidecar_path("results/q/se/x/alpha_log_0.03_10_n24.csv") == Path(
        "results/q/se/x/alpha_log_0.03_10_n24.json")
    assert sidecars.sidecar_path("figures/quick/paper1_fig1.pdf") == Path(
        "figures/quick/paper1_fig1.json")
    with pytest.raises(ValueError):
        sidecars.sidecar_path("x.json")


def make_result(tmp_path: Path):
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    code = tmp_path / "code.py"
    code.write_text("print('hi')\n")
    result = tmp_path / "result.csv"
    result.write_text("b\n2\n")
    return data, code, result


def test_write_sidecar_records_every_required_field(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)  # pytest may run inside a Slurm job
    data, code, result = make_result(tmp_path)
    side = sidecars.write_sidecar(
        "result.csv", rule="se_curve",
        params={"rho": float("inf"), "n": np.int64(4), "grid": np.array([0.5, 1.0]),
                "ok": np.bool_(True)},
        inputs=["data.csv"], code=["code.py"],
        diagnostics={"converged": True, "iterations": 12, "residual": 1e-13},
        started=T0, ended=T1, seed=7, config_hash="c" * 64,
    )
    assert side == Path("result.json")
    record = json.loads((tmp_path / "result.json").read_text())
    assert record["schema"] == sidecars.SIDECAR_SCHEMA
    assert record["outputs"] == {"result.csv": sha256(result)}
    assert record["rule"] == "se_curve"
    assert record["params"] == {"rho": "inf", "n": 4, "grid": [0.5, 1.0], "ok": True}
    assert record["seed"] == 7 and record["config_hash"] == "c" * 64
    assert record["inputs"] == {"data.csv": sha256(data)}
    assert record["code"] == {"code.py": sha256(code)}
    assert record["diagnostics"] == {"converged": True, "iterations": 12, "residual": 1e-13}
    assert record["aimrepro_version"] == aimrepro.__version__
    assert set(record["git"]) == {"commit", "dirty"}
    assert {"python", "numpy", "scipy", "snakemake"} <= set(record["versions"])
    assert record["host"]
    assert record["slurm_job_id"] is None
    assert record["started"] == "2026-11-30T12:00:00.000Z"
    assert record["ended"] == "2026-11-30T12:00:02.500Z"
    assert record["wall_seconds"] == 2.5


def test_write_sidecar_records_the_slurm_job_it_ran_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_result(tmp_path)
    monkeypatch.setenv("SLURM_JOB_ID", "4711")
    sidecars.write_sidecar("result.csv", rule="se_curve", params={}, inputs=[], code=[],
                       diagnostics={}, started=T0, ended=T1)
    assert json.loads((tmp_path / "result.json").read_text())["slurm_job_id"] == "4711"


def test_write_sidecar_for_several_outputs_and_errors(tmp_path):
    pdf, png = tmp_path / "fig.pdf", tmp_path / "fig.png"
    pdf.write_bytes(b"pdf")
    png.write_bytes(b"png")
    side = sidecars.write_sidecar([pdf, png], rule="fig", params={}, inputs=[], code=[],
                              diagnostics={}, started=T0, ended=T1)
    assert side == tmp_path / "fig.json"
    assert set(json.loads(side.read_text())["outputs"]) == {str(pdf), str(png)}
    other = tmp_path / "other.png"
    other.write_bytes(b"x")
    with pytest.raises(ValueError, match="same directory and stem"):
        sidecars.write_sidecar([pdf, other], rule="fig", params={}, inputs=[], code=[],
                           diagnostics={}, started=T0, ended=T1)
    with pytest.raises(ValueError, match="before"):
        sidecars.write_sidecar(pdf, rule="fig", params={}, inputs=[], code=[],
                           diagnostics={}, started=T1, ended=T0)
    with pytest.raises(TypeError, match="cannot record"):
        sidecars.write_sidecar(pdf, rule="fig", params={"bad": object()}, inputs=[], code=[],
                           diagnostics={}, started=T0, ended=T1)


def test_read_sidecar_from_result_or_sidecar(tmp_path):
    _, _, result = make_result(tmp_path)
    sidecars.write_sidecar(result, rule="r", params={}, inputs=[], code=[], diagnostics={},
                       started=T0, ended=T1)
    assert sidecars.read_sidecar(result) == sidecars.read_sidecar(tmp_path / "result.json")
    (tmp_path / "foreign.json").write_text('{"schema": "other"}')
    with pytest.raises(ValueError, match="not an aimrepro sidecar"):
        sidecars.read_sidecar(tmp_path / "foreign.json")


# --- lineage ---------------------------------------------------------------------


def build_chain(root: Path) -> None:
    """raw.txt -> results/curve.csv -> figures/fig.pdf (+ .png), paths relative to root."""
    (root / "results").mkdir(parents=True)
    (root / "figures").mkdir()
    (root / "raw.txt").write_text("raw\n")
    (root / "code.py").write_text("pass\n")
    (root / "results" / "curve.csv").write_text("x\n1\n")
    sidecars.write_sidecar(root / "results" / "curve.csv", rule="se_curve", params={},
                       inputs=[root / "raw.txt"], code=[root / "code.py"],
                       diagnostics={"converged": True, "n_points": 1, "n_unconverged": 0},
                       started=T0, ended=T1)
    for ext in ("pdf", "png"):
        (root / "figures" / f"fig.{ext}").write_bytes(ext.encode())


def test_lineage_follows_inputs_and_renders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLURM_JOB_ID", "42")  # the curve is made in Slurm job 42 ...
    build_chain(Path("."))
    monkeypatch.delenv("SLURM_JOB_ID")  # ... the figure outside Slurm
    sidecars.write_sidecar(["figures/fig.pdf", "figures/fig.png"], rule="fig", params={},
                       inputs=["results/curve.csv"], code=["code.py"], diagnostics={},
                       started=T0, ended=T1)
    tree = lineage.lineage("figures/fig.pdf")
    assert tree.status == "ok" and tree.sidecar["rule"] == "fig"
    [curve] = tree.children
    assert curve.path == "results/curve.csv" and curve.status == "ok"
    [raw] = curve.children
    assert raw.status == "no sidecar" and raw.children == []
    text = lineage.render_lineage(tree)
    lines = text.splitlines()
    assert lines[0].startswith("figures/fig.pdf  (rule fig")
    assert lines[1].startswith("└── results/curve.csv  (rule se_curve")
    assert "converged=True (1/1 points)" in lines[1]
    assert "slurm job 42" in lines[1] and "slurm job" not in lines[0]
    assert lines[2].startswith("    └── raw.txt") and "[no sidecar]" in lines[2]
    assert "code code.py" in lineage.render_lineage(tree, show_code=True)
    # The sidecar itself is an accepted starting point.
    assert lineage.lineage("figures/fig.json").children[0].path == "results/curve.csv"


def test_lineage_resolves_in_a_moved_copy(tmp_path, monkeypatch):
    original = tmp_path / "original"
    original.mkdir()
    monkeypatch.chdir(original)
    build_chain(Path("."))
    sidecars.write_sidecar("figures/fig.pdf", rule="fig", params={}, inputs=["results/curve.csv"],
                       code=[], diagnostics={}, started=T0, ended=T1)
    moved = tmp_path / "moved"
    shutil.copytree(original, moved)
    shutil.rmtree(original)
    monkeypatch.chdir(tmp_path)
    tree = lineage.lineage(moved / "figures" / "fig.pdf")
    # absolute, symbolic links kept (a result may link into the shared cache)
    assert tree.children[0].resolved == Path(os.path.abspath(moved / "results" / "curve.csv"))
    assert tree.children[0].status == "ok"


def test_lineage_flags_modified_changed_and_missing_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build_chain(Path("."))
    Path("other.csv").write_text("o\n")
    sidecars.write_sidecar("figures/fig.pdf", rule="fig", params={},
                       inputs=["results/curve.csv", "other.csv"], code=[], diagnostics={},
                       started=T0, ended=T1)
    Path("results/curve.csv").write_text("x\n2\n")  # edited after both sidecars
    Path("other.csv").unlink()
    tree = lineage.lineage("figures/fig.pdf")
    statuses = {child.path: child.status for child in tree.children}
    assert statuses == {"results/curve.csv": "changed since use", "other.csv": "missing"}
    assert lineage.lineage("results/curve.csv").status == "modified"
    assert "[missing]" in lineage.render_lineage(tree)


def test_lineage_of_a_missing_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        lineage.lineage(tmp_path / "nothing.pdf")


# --- tables ----------------------------------------------------------------------


def test_table_round_trip_keeps_types_and_special_values(tmp_path):
    columns = {
        "alphabar": np.array([0.1, 1.0 / 3.0, 20.0]),
        "alpha": np.array([np.nan, np.nan, np.nan]),
        "mmse": np.array([1.0, 0.123456789012345678, 0.0]),
        "residual": np.array([np.inf, 1e-300, 5e-324]),
        "converged": np.array([True, False, True]),
        "iterations": np.array([3, 10_000, 0]),
    }
    path = tmp_path / "t.csv"
    tables.write_table(path, columns)
    assert path.read_text().splitlines()[0] == "alphabar,alpha,mmse,residual,converged,iterations"
    assert "true" in path.read_text() and "nan" in path.read_text()
    back = tables.read_table(path)
    assert list(back) == list(columns)
    assert back["converged"].dtype == bool and back["iterations"].dtype == np.int64
    for name, values in columns.items():
        np.testing.assert_array_equal(back[name], values)


def test_write_table_rejects_bad_columns(tmp_path):
    with pytest.raises(ValueError, match="equal length"):
        tables.write_table(tmp_path / "t.csv", {"a": [1.0, 2.0], "b": [1.0]})
    with pytest.raises(ValueError, match="at least one column"):
        tables.write_table(tmp_path / "t.csv", {})
    with pytest.raises(ValueError, match="column names"):
        tables.write_table(tmp_path / "t.csv", {"a,b": [1.0]})
    with pytest.raises(TypeError, match="unsupported dtype"):
        tables.write_table(tmp_path / "t.csv", {"s": np.array(["x"])})
    assert not (tmp_path / "t.csv").exists()


def test_read_table_reports_ragged_and_non_numeric_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3\n")
    with pytest.raises(ValueError, match=":3: 1 cells"):
        tables.read_table(path)
    path.write_text("a\nfoo\n")
    with pytest.raises(ValueError, match="not numeric"):
        tables.read_table(path)


# --- logging ---------------------------------------------------------------------


def test_capture_log_records_messages_stderr_and_failures(tmp_path):
    import sys

    log = tmp_path / "logs" / "job.log"
    with logs.capture_log(log) as logger:
        logger.info("progress 1")
        logging.getLogger("aimrepro.paper1.state_evolution").info("iteration 3")
        print("to stderr", file=sys.stderr)
    text = log.read_text()
    assert "progress 1" in text and "iteration 3" in text and "to stderr" in text
    with pytest.raises(ZeroDivisionError):
        with logs.capture_log(log):
            1 / 0  # noqa: B018
    assert "step failed" in log.read_text() and "ZeroDivisionError" in log.read_text()


def test_capture_log_keeps_third_party_info_out(tmp_path):
    log = tmp_path / "job.log"
    with logs.capture_log(log):
        logging.getLogger("fontTools.subset").info("glyph chatter")
        logging.getLogger("fontTools.subset").warning("a real problem")
    text = log.read_text()
    assert "glyph chatter" not in text and "a real problem" in text


# --- verification of inputs and lineages ----------------------------------------


def test_verify_input_returns_the_hash_of_an_intact_result(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build_chain(Path("."))
    assert sidecars.verify_input("results/curve.csv") == files.file_sha256("results/curve.csv")
    # a raw input without a sidecar is only hashed
    assert sidecars.verify_input("raw.txt") == files.file_sha256("raw.txt")


@pytest.mark.parametrize("damage", ["truncate", "drop_last_row"])
def test_verify_input_refuses_a_damaged_result_in_one_line(tmp_path, monkeypatch, damage):
    monkeypatch.chdir(tmp_path)
    build_chain(Path("."))
    table = Path("results/curve.csv")
    text = table.read_text()
    table.write_text(text[:3] if damage == "truncate" else text.rsplit("\n", 2)[0] + "\n")
    with pytest.raises(sidecars.DamagedInputError) as caught:
        sidecars.verify_input(table)
    message = str(caught.value)
    assert "\n" not in message
    assert "results/curve.csv" in message
    # one command that works whatever is downstream: the repair of the result directories
    assert "aimrepro provenance --check --repair" in message and message.endswith("&& snakemake")


def test_the_repair_targets_of_a_pipeline_result_are_its_scale_directories():
    assert sidecars.repair_targets("results/quick/amp/x/run.npz") == ["results/quick", "figures/quick"]
    assert sidecars.repair_targets("figures/paper/fig.pdf") == ["results/paper", "figures/paper"]
    assert sidecars.repair_targets("elsewhere/table.csv") == ["elsewhere"]
    assert sidecars.repair_command(["results/quick", "figures/quick"]) == (
        "aimrepro provenance --check --repair results/quick figures/quick && snakemake")


def test_verify_input_refuses_a_result_whose_sidecar_is_missing(tmp_path, monkeypatch):
    """A result (under results/ or figures/) without its sidecar says nothing of how it was made."""
    monkeypatch.chdir(tmp_path)
    build_chain(Path("."))
    Path("results/curve.json").unlink()
    with pytest.raises(sidecars.DamagedInputError) as caught:
        sidecars.verify_input("results/curve.csv")
    assert "sidecar results/curve.json is missing" in str(caught.value)
    assert "--repair" in str(caught.value)


@pytest.mark.parametrize("sidecar_text", [
    "{not json",
    "[1, 2]",
    '{"schema": "aimrepro.sidecar/1", "outputs": ["results/curve.csv"], "inputs": {}, "code": {}}',
    '{"schema": "something else"}',
])
def test_verify_input_refuses_a_result_whose_sidecar_is_malformed(tmp_path, monkeypatch, sidecar_text):
    monkeypatch.chdir(tmp_path)
    build_chain(Path("."))
    Path("results/curve.json").write_text(sidecar_text)
    with pytest.raises(sidecars.DamagedInputError, match="curve.csv"):
        sidecars.verify_input("results/curve.csv")


def figure_chain(root: Path) -> None:
    build_chain(root)
    sidecars.write_sidecar([root / "figures/fig.pdf", root / "figures/fig.png"], rule="fig", params={},
                       inputs=[root / "results/curve.csv"], code=[root / "code.py"],
                       diagnostics={}, started=T0, ended=T1)


def test_check_lineage_passes_an_intact_lineage_and_names_every_difference(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    figure_chain(Path("."))
    # raw.txt has no sidecar: nothing vouches for it, so even an intact tree reports it
    intact = lineage.check_lineage("figures/fig.pdf")
    assert intact.problems == ["raw.txt: no sidecar"]
    assert intact.n_files == 3 and intact.n_code_files == 1
    Path("code.py").write_text("pass  # edited\n")
    Path("results/curve.csv").write_text("x\n2\n")
    problems = lineage.check_lineage("figures/fig.pdf").problems
    assert "figures/fig.pdf: code code.py: changed" in problems
    assert "results/curve.csv: changed since use" in problems
    assert "results/curve.csv: code code.py: changed" in problems


def test_check_lineage_reports_malformed_records_cycles_and_devices(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    figure_chain(Path("."))
    record = json.loads(Path("results/curve.json").read_text())
    # a cycle: the curve lists the figure, which lists the curve
    record["inputs"] = {"figures/fig.pdf": files.file_sha256("figures/fig.pdf"), "/dev/zero": "0" * 64}
    Path("results/curve.json").write_text(json.dumps(record))
    problems = lineage.check_lineage("figures/fig.pdf").problems
    assert "figures/fig.pdf: cycle" in problems
    assert "/dev/zero: not a regular file" in problems
    record["inputs"] = ["raw.txt"]  # a list where a mapping belongs
    Path("results/curve.json").write_text(json.dumps(record))
    problems = lineage.check_lineage("figures/fig.pdf").problems
    assert problems == ["results/curve.csv: malformed sidecar: 'inputs' is not a mapping of path to sha256"]
    tree_text = lineage.render_lineage(lineage.lineage("figures/fig.pdf"))
    assert "[malformed sidecar" in tree_text


def test_cli_provenance_check_exit_codes(tmp_path, monkeypatch, capsys):
    from aimrepro.cli import main

    monkeypatch.chdir(tmp_path)
    figure_chain(Path("."))
    Path("raw.txt").unlink()
    record = json.loads(Path("results/curve.json").read_text())
    record["inputs"] = {}
    Path("results/curve.json").write_text(json.dumps(record))
    Path("results/curve.csv").write_text(Path("results/curve.csv").read_text())  # same bytes
    assert main(["provenance", "--check", "figures/fig.pdf"]) == 0
    assert capsys.readouterr().out.strip().endswith("verified: 2 files, 1 code files")
    Path("results/curve.csv").write_text("x\n")
    assert main(["provenance", "--check", "figures/fig.pdf"]) == 1
    out = capsys.readouterr().out
    assert "results/curve.csv: changed since use" in out and "differs" in out


# --- repair: remove what is damaged and what was made from it --------------------------


def repair_chain(root: Path) -> None:
    """raw.txt -> results/curve.csv -> results/summary.csv -> figures/fig.{pdf,png}, and a second
    figure from the curve alone (figures/other.pdf)."""
    figure_chain(root)
    (root / "results" / "summary.csv").write_text("mean\n1\n")
    sidecars.write_sidecar(root / "results" / "summary.csv", rule="summary", params={},
                           inputs=[root / "results" / "curve.csv"], code=[root / "code.py"],
                           diagnostics={}, started=T0, ended=T1)
    (root / "figures" / "other.pdf").write_bytes(b"other")
    sidecars.write_sidecar(root / "figures" / "other.pdf", rule="other", params={},
                           inputs=[root / "results" / "summary.csv"], code=[root / "code.py"],
                           diagnostics={}, started=T0, ended=T1)


def present(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("damage", ["truncate", "delete_sidecar", "malformed_sidecar", "delete"])
def test_repair_removes_the_damaged_file_and_everything_made_from_it(tmp_path, monkeypatch, damage):
    monkeypatch.chdir(tmp_path)
    repair_chain(Path("."))
    before = present(Path("."))
    curve = Path("results/curve.csv")
    {"truncate": lambda: curve.write_text("x\n"),
     "delete_sidecar": lambda: curve.with_suffix(".json").unlink(),
     "malformed_sidecar": lambda: curve.with_suffix(".json").write_text("{"),
     "delete": curve.unlink}[damage]()
    assert not lineage.check_lineage("figures/other.pdf").ok

    outcome = lineage.repair(["figures/other.pdf"])
    assert outcome.complete and outcome.rebuilt and outcome.rebuilt[0].startswith("results/curve.csv: ")
    # the curve, the summary made from it and the figure made from that go, with their sidecars;
    # the raw input, the code and figures/fig.* (not on the way to the target) stay
    gone = {"results/curve.csv", "results/curve.json", "results/summary.csv", "results/summary.json",
            "figures/other.pdf", "figures/other.json"}
    assert present(Path(".")) == before - gone
    assert "now run: snakemake" in lineage.describe_repair(outcome)


def test_repair_of_a_directory_reaches_every_consumer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repair_chain(Path("."))
    Path("results/curve.csv").write_text("x\n")  # damaged: both figures are made from it
    check = lineage.check_directory("figures")
    assert not check.ok and any("results/curve.csv: changed since use" in p for p in check.problems)
    outcome = lineage.repair(["results", "figures", "no/such/directory"])
    assert outcome.complete
    assert present(Path(".")) == {"raw.txt", "code.py"}


def test_repair_of_an_intact_lineage_removes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repair_chain(Path("."))
    before = present(Path("."))
    outcome = lineage.repair(["figures/other.pdf", "results"])
    assert outcome.removed == [] and outcome.rebuilt == [] and outcome.complete
    assert present(Path(".")) == before
    # the check, as check_lineage, still names the raw input that has no sidecar
    assert lineage.check_directory("results").problems == ["raw.txt: no sidecar"]


def test_repair_never_deletes_a_raw_input_or_a_changed_code_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    repair_chain(Path("."))
    Path("code.py").write_text("pass  # edited\n")
    Path("raw.txt").write_text("edited raw\n")  # changed since use: its consumers are rebuilt
    outcome = lineage.repair(["figures/other.pdf"])
    assert Path("raw.txt").is_file()  # not a pipeline result: kept, its consumers rebuilt
    assert "raw.txt: changed since use" in outcome.rebuilt
    assert not Path("results/curve.csv").exists() and not Path("figures/other.pdf").exists()
    assert Path("code.py").is_file() and outcome.code_changed == ["code code.py: changed"]


def test_a_temporary_result_deleted_once_used_is_neither_a_problem_nor_repaired(tmp_path, monkeypatch):
    """Paper-scale datasets are temp(): their sidecar stays and says so; absent is then by design."""
    monkeypatch.chdir(tmp_path)
    repair_chain(Path("."))
    sidecars.write_sidecar("results/curve.csv", rule="se_curve", params={}, inputs=["raw.txt"],
                           code=["code.py"], diagnostics={}, started=T0, ended=T1, temporary=True)
    assert sidecars.read_sidecar("results/summary.csv")["temporary"] is False
    Path("results/curve.csv").unlink()
    check = lineage.check_lineage("results/summary.csv")
    assert check.problems == ["raw.txt: no sidecar"]  # the raw input, as ever; not the deleted curve
    assert lineage.lineage("results/summary.csv").children[0].status == lineage.DELETED_TEMPORARY
    before = present(Path("."))
    outcome = lineage.repair(["results", "figures"])
    assert outcome.removed == [] and outcome.complete and present(Path(".")) == before

# --- results reused from another working directory (Snakemake's shared cache) -------


def reuse_setup(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """A result made in clone ``one``, moved into a cache as Snakemake does, and linked from clone ``two``.

    Both clones hold the same code file; returns (one, two, cache).
    """
    one, two, cache = tmp_path / "one", tmp_path / "two", tmp_path / "cache"
    for clone in (one, two):
        (clone / "results").mkdir(parents=True)
        (clone / "code.py").write_text("pass\n")
    cache.mkdir()
    monkeypatch.chdir(one)
    Path("results/curve.csv").write_text("x\n1\n")
    sidecars.write_sidecar("results/curve.csv", rule="se_curve", params={}, inputs=[],
                           code=["code.py"], diagnostics={}, started=T0, ended=T1)
    key = "ab" * 32
    for name, entry in (("curve.csv", f"{key}_table.csv"), ("curve.json", f"{key}_sidecar.json")):
        shutil.move(one / "results" / name, cache / entry)
        for clone in (one, two):
            (clone / "results" / name).symlink_to(cache / entry)
    monkeypatch.chdir(two)
    return one, two, cache


def test_a_reused_result_is_verified_and_says_where_it_was_made(tmp_path, monkeypatch):
    one, two, cache = reuse_setup(tmp_path, monkeypatch)
    entry = str(cache / ("ab" * 32 + "_table.csv"))
    assert sidecars.verify_input("results/curve.csv") == sha256(two / "results/curve.csv")
    reuse = sidecars.reused_input("results/curve.csv")
    assert reuse["cache_entry"] == entry and reuse["workdir"] == str(one)
    assert reuse["host"] and reuse["ended"] == "2026-11-30T12:00:02.500Z"
    # in the clone that computed it, a link into the cache is no reuse
    assert sidecars.reused_input("results/curve.csv", workdir=one) is None
    # the consumer's sidecar keeps the record
    Path("fig.pdf").write_text("f")
    sidecars.write_sidecar("fig.pdf", rule="fig", params={}, inputs=["results/curve.csv"], code=[],
                           diagnostics={}, started=T0, ended=T1,
                           reused_inputs={"results/curve.csv": reuse})
    assert json.loads(Path("fig.json").read_text())["reused_inputs"]["results/curve.csv"] == reuse
    node = lineage.lineage("results/curve.csv")
    assert node.status == "ok" and node.cache_entry == entry and node.reused["workdir"] == str(one)
    text = lineage.render_lineage(lineage.lineage("fig.pdf"))
    assert f"reused: made on {reuse['host']} in {one}" in text and f"cache entry {entry}" in text
    assert lineage.check_lineage("fig.pdf").problems == []


def test_a_reused_result_made_by_other_code_or_for_another_path_is_refused(tmp_path, monkeypatch):
    one, two, cache = reuse_setup(tmp_path, monkeypatch)
    (two / "code.py").write_text("pass  # not the code that made it\n")
    with pytest.raises(sidecars.DamagedInputError) as caught:
        sidecars.verify_input("results/curve.csv")
    message = str(caught.value)
    assert "\n" not in message and f"reused from {sidecars.socket.gethostname()}:{one}" in message
    assert "made by other code: code.py (sha256" in message
    assert f"cache entries {cache}/{'ab' * 32}_*" in message  # the remedy names the entries
    (two / "code.py").write_text("pass\n")
    # the same entry under another directory: a result of other parameters (paths name them all)
    (two / "results" / "paper").mkdir()
    for name in ("curve.csv", "curve.json"):
        (two / "results" / "paper" / name).symlink_to(two / "results" / name)
    with pytest.raises(sidecars.DamagedInputError, match="its sidecar describes results/curve.csv, "
                                                           "not results/paper/curve.csv"):
        sidecars.verify_input("results/paper/curve.csv")


def test_a_damaged_cache_entry_is_refused_with_the_entry_to_remove(tmp_path, monkeypatch):
    one, two, cache = reuse_setup(tmp_path, monkeypatch)
    (cache / ("ab" * 32 + "_table.csv")).write_text("x\n2\n")
    with pytest.raises(sidecars.DamagedInputError, match="does not match its sidecar .* it links to "
                                                           "the shared cache entry"):
        sidecars.verify_input("results/curve.csv")
    assert lineage.check_lineage("results/curve.csv").problems == ["results/curve.csv: modified"]
