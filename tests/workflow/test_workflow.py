"""The Snakemake workflow, driven through its command line in a copy of the repository.

(a) a dry run of the default config plans every figure;
(b) a tiny config runs end to end: every result and figure has its sidecar
    with the required fields, figures carry the commit and config hash, and
    ``aimrepro provenance`` prints a figure's inputs;
(c) after (b), changing one rho of one figure reruns only what depends on it;
(d) invalid configs fail before any job with one line naming key and range.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from aimrepro.figures.style import read_figure_metadata

from conftest import (CLUSTER_JOBS, CLUSTER_TARGET, cluster_tiny_config, copy_repository,
                      executable, run_snakemake, science_api_missing)

pytestmark = pytest.mark.workflow

needs_science = pytest.mark.skipif(science_api_missing() is not None,
                                   reason=str(science_api_missing()))

#: Few rho, few grid points; one hardmax channel to keep the run short.
TINY_CONFIG = {
    "scale": "quick",
    "scales": {
        "quick": {"se_points": {"softmax": 4, "hardmax": 3, "small_width": 4}},
        "paper": {"se_points": {"softmax": 8, "hardmax": 4, "small_width": 4}},
    },
    "paper1": {
        "figure1": {
            "T": 2,
            "channels": ["hardmax"],
            "left": {"rhos": [0.5], "alpha": {"spacing": "log", "lo": 0.1, "hi": 3}},
            "right": {"rhos": [0.5], "alphabar": {"spacing": "log", "lo": 0.2, "hi": 6},
                      "small_width_limit": True},
        },
        "figure2": {
            "left": {"T": 2, "rhos": [0.5, 1.0],
                     "alphapr": {"spacing": "lin", "lo": 0.01, "hi": 1},
                     "rho_infinity": True,
                     "rho_infinity_alpha": {"spacing": "lin", "lo": 0, "hi": 0.25}},
            "right": {"T": 2, "rho": 0.5, "alphaT": {"spacing": "lin", "lo": 0.01, "hi": 1}},
        },
    },
}

SIDECAR_FIELDS = {"schema", "outputs", "rule", "params", "seed", "config_hash", "inputs",
                  "code", "diagnostics", "aimrepro_version", "git", "versions", "host",
                  "started", "ended", "wall_seconds"}


def planned_jobs(output: str) -> list[tuple[str, str]]:
    """(rule, first output) of every job in a dry run's listing."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        header = re.match(r"(?:local)?rule (\w+):", block)
        if header:
            found = re.search(r"^\s+output: ([^,\n]+)", block, re.MULTILINE)
            jobs.append((header.group(1), found.group(1) if found else ""))
    return jobs


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- (a) -------------------------------------------------------------------------


def test_dry_run_of_the_default_config(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2")
    jobs = planned_jobs(done.stdout)
    rules = [rule for rule, _ in jobs]
    assert {"se_curve", "paper1_fig1", "paper1_fig2", "claims", "all"} <= set(rules)
    config = yaml.safe_load((repo_copy / "config.yaml").read_text())
    figure1, figure2 = config["paper1"]["figure1"], config["paper1"]["figure2"]
    n_curves = (len(figure1["channels"]) * (len(figure1["left"]["rhos"])
                                            + len(figure1["right"]["rhos"]) + 1)
                + len(figure2["left"]["rhos"]) + 2)
    assert rules.count("se_curve") == n_curves
    assert all(out.startswith(("results/quick/", "figures/quick/")) for _, out in jobs if out)
    assert not (repo_copy / "results").exists()


def test_dry_run_at_paper_scale_writes_under_paper(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2", "--config", "scale=paper")
    outputs = [out for _, out in planned_jobs(done.stdout) if out]
    assert outputs and all(out.startswith(("results/paper/", "figures/paper/"))
                           for out in outputs)
    assert "hardmax_T2_rho0.5/alpha_log_0.03_10_n128.csv" in done.stdout


# --- (b), (c) --------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A repository copy with the tiny config, built once for (b) and (c)."""
    if science_api_missing():
        pytest.skip(science_api_missing())
    workdir = tmp_path_factory.mktemp("tiny") / "aimrepro"
    copy_repository(workdir, TINY_CONFIG)
    run_snakemake(workdir, "--cores", "2")
    return workdir


@needs_science
def test_tiny_run_writes_every_result_with_a_complete_sidecar(tiny_run):
    results = sorted((tiny_run / "results" / "quick" / "se").glob("*/*.csv"))
    # figure 1: left, right, rho -> 0; figure 2: 2 rho, rho = inf, right panel.
    assert len(results) == 3 + 4
    figures = [tiny_run / "figures" / "quick" / f"paper1_fig{i}.{ext}"
               for i in (1, 2) for ext in ("pdf", "png")]
    for output in [*results, *figures, tiny_run / "results" / "quick" / "claims.md"]:
        assert output.exists(), output
        sidecar = json.loads(output.with_suffix(".json").read_text())
        assert SIDECAR_FIELDS <= set(sidecar), output
        relative = str(output.relative_to(tiny_run))
        assert sidecar["outputs"][relative] == sha256(output)
        for path, digest in {**sidecar["inputs"], **sidecar["code"]}.items():
            assert sha256(tiny_run / path) == digest, path
        assert {"python", "numpy", "scipy", "snakemake"} <= set(sidecar["versions"])
        started, ended = (dt.datetime.fromisoformat(sidecar[key].replace("Z", "+00:00"))
                          for key in ("started", "ended"))
        assert started.tzinfo is not None and ended >= started
        assert sidecar["wall_seconds"] >= 0
        if shutil.which("git"):
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tiny_run, check=True,
                                  capture_output=True, text=True).stdout.strip()
            assert sidecar["git"] == {"commit": head, "dirty": False}


@needs_science
def test_tiny_run_se_sidecars_hold_parameters_and_solver_diagnostics(tiny_run):
    path = tiny_run / "results/quick/se/hardmax_T2_rho0.5/alpha_log_0.1_3_n3.json"
    sidecar = json.loads(path.read_text())
    assert sidecar["rule"] == "se_curve"
    assert sidecar["params"]["wildcards"] == {
        "scale": "quick", "channel": "hardmax", "T": "2", "rho": "0.5", "axis": "alpha",
        "spacing": "log", "lo": "0.1", "hi": "3", "n": "3"}
    assert "solver" in sidecar["params"] and sidecar["seed"] is None
    assert {"converged", "n_points", "n_unconverged", "max_iterations",
            "max_residual"} <= set(sidecar["diagnostics"])
    assert sidecar["inputs"] == {}
    assert "src/aimrepro/paper1/state_evolution.py" in sidecar["code"]
    assert "workflow/scripts/se_curve.py" in sidecar["code"]


@needs_science
def test_tiny_run_figures_embed_commit_and_config_hash(tiny_run):
    for name in ("paper1_fig1", "paper1_fig2"):
        sidecar = json.loads((tiny_run / "figures" / "quick" / f"{name}.json").read_text())
        assert sorted(sidecar["inputs"]) == sorted(
            curve["path"] for curve in sidecar["params"]["curves"])
        for ext in ("pdf", "png"):
            metadata = read_figure_metadata(tiny_run / "figures" / "quick" / f"{name}.{ext}")
            assert metadata["commit"] == sidecar["git"]["commit"]
            assert metadata["config_hash"] == sidecar["config_hash"]
    thresholds = json.loads((tiny_run / "figures/quick/paper1_fig1.json").read_text())[
        "diagnostics"]["weak_recovery_thresholds"]
    assert set(thresholds) == {"hardmax"}


@needs_science
def test_provenance_command_prints_a_figures_inputs(tiny_run):
    done = subprocess.run([executable("aimrepro"), "provenance",
                           "figures/quick/paper1_fig2.pdf"], cwd=tiny_run,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("figures/quick/paper1_fig2.pdf  (rule paper1_fig2")
    sidecar = json.loads((tiny_run / "figures/quick/paper1_fig2.json").read_text())
    for path in sidecar["inputs"]:
        assert any(path in line and "rule se_curve" in line for line in lines[1:]), path
    assert "[" not in done.stdout  # no missing/modified/no-sidecar flags


@needs_science
def test_claims_table_names_what_this_scale_does_not_measure(tiny_run):
    text = (tiny_run / "results" / "quick" / "claims.md").read_text()
    assert text.startswith("# Claims of the papers, measured")
    assert "Scale **quick**" in text
    assert "Not measured at this scale: paper1_amp (no AMP sizes in scales.quick.amp)" in text


@needs_science
def test_nothing_to_do_after_a_complete_run(tiny_run):
    done = run_snakemake(tiny_run, "-n", "--cores", "2")
    assert planned_jobs(done.stdout) == []
    assert "Nothing to be done" in done.stdout + done.stderr


@needs_science
def test_changing_one_rho_reruns_only_its_curve_and_figure(tiny_run):
    config_path = tiny_run / "config.yaml"
    original = config_path.read_text()
    changed = yaml.safe_load(original)
    changed["paper1"]["figure2"]["left"]["rhos"] = [0.5, 2.0]  # 1.0 -> 2.0
    config_path.write_text(yaml.safe_dump(changed, sort_keys=False))
    try:
        done = run_snakemake(tiny_run, "-n", "--cores", "2")
    finally:
        config_path.write_text(original)
    # the theory claims measure alpha_PR for every rho of this list, so they rerun too
    assert sorted(planned_jobs(done.stdout)) == sorted([
        ("se_curve", "results/quick/se/softmax_T2_rho2/alphapr_lin_0.01_1_n4.csv"),
        ("paper1_fig2", "figures/quick/paper1_fig2.pdf"),
        ("claims_paper1_theory", "results/quick/claims/paper1_theory.tsv"),
        ("claims", "results/quick/claims.md"),
        ("all", ""),
    ])


@needs_science
def test_changing_one_hardmax_rho_reruns_only_its_curve_and_figure(tiny_run):
    config_path = tiny_run / "config.yaml"
    original = config_path.read_text()
    changed = yaml.safe_load(original)
    changed["paper1"]["figure1"]["right"]["rhos"] = [2.0]  # 0.5 -> 2.0
    config_path.write_text(yaml.safe_dump(changed, sort_keys=False))
    try:
        done = run_snakemake(tiny_run, "-n", "--cores", "2")
    finally:
        config_path.write_text(original)
    assert sorted(planned_jobs(done.stdout)) == sorted([
        ("se_curve", "results/quick/se/hardmax_T2_rho2/alphabar_log_0.2_6_n3.csv"),
        ("paper1_fig1", "figures/quick/paper1_fig1.pdf"),
        ("all", ""),
    ])


def _planned_after_edit(repo, relative):
    """Rules a dry run plans after a real edit of one file (restored afterwards).

    A real edit: Snakemake ignores a newer mtime when the content is unchanged.
    """
    module = repo / relative
    original, stat = module.read_bytes(), module.stat()
    try:
        module.write_bytes(original + b"\n# an edit\n")
        done = run_snakemake(repo, "-n", "--cores", "2")
    finally:
        module.write_bytes(original)
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return [rule for rule, _ in planned_jobs(done.stdout)]


@needs_science
def test_editing_a_science_module_reruns_the_curves_that_use_it(tiny_run):
    # docs/design.md "Reruns": code inputs make an SE edit rerun the SE, its figures and
    # the theory claims that call it.
    rules = _planned_after_edit(tiny_run, "src/aimrepro/paper1/state_evolution.py")
    assert rules.count("se_curve") == 7
    assert {"paper1_fig1", "paper1_fig2", "claims_paper1_theory", "claims"} <= set(rules)


@needs_science
def test_editing_the_plotting_code_reruns_only_the_figures(tiny_run):
    rules = _planned_after_edit(tiny_run, "src/aimrepro/figures/style.py")
    assert sorted(rules) == ["all", "paper1_fig1", "paper1_fig2"]


# --- (d) -------------------------------------------------------------------------


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda c: c["paper1"]["figure1"]["left"]["rhos"].__setitem__(0, -1),
     "paper1.figure1.left.rhos[0] = -1; allowed: a finite number > 0"),
    (lambda c: c["paper1"]["figure2"]["right"].__setitem__("T", 1),
     "paper1.figure2.right.T = 1; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["figure1"]["channels"].__setitem__(0, "argmax"),
     "paper1.figure1.channels[0] = 'argmax'; allowed: one of 'hardmax_paper', 'hardmax'"),
    (lambda c: c["paper1"]["figure2"]["left"].__setitem__("rhos", "0.5"),
     "paper1.figure2.left.rhos = '0.5'; allowed: a list of a finite number > 0"),
    (lambda c: c["scales"]["quick"]["se_points"].__setitem__("softmax", "many"),
     "scales.quick.se_points.softmax = 'many'; allowed: an integer >= 2"),
    (lambda c: c["paper1"]["amp_solver"].__setitem__("tol", float("nan")),
     "paper1.amp_solver.tol = nan; allowed: a finite number > 0"),
    (lambda c: c["scales"]["paper"]["data"].__setitem__("test_samples", 10**9),
     "scales.paper.data.test_samples = 1000000000: the largest job"),
])
def test_invalid_config_fails_before_any_job_with_one_line(repo_copy, tmp_path, mutate,
                                                            expected):
    config = yaml.safe_load((repo_copy / "config.yaml").read_text())
    mutate(config)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    done = run_snakemake(repo_copy, "-n", "--cores", "2", "--configfile", str(bad),
                         check=False)
    assert done.returncode != 0
    messages = [line for line in done.stderr.splitlines() if "invalid config" in line]
    assert len(messages) == 1, done.stderr
    assert messages[0].startswith(f"aimrepro: invalid config: {expected}")
    assert "Building DAG" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert not (repo_copy / "results").exists()


def test_invalid_scale_on_the_command_line(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2", "--config", "scale=huge",
                         check=False)
    assert done.returncode != 0
    assert "aimrepro: invalid config: scale = 'huge'; allowed: one of 'quick', 'paper'" in (
        done.stderr)


def test_the_cluster_target_is_five_theory_jobs(tmp_path):
    """The DAG the cluster tests count (tests/cluster) is what they expect."""
    workdir = copy_repository(tmp_path / "aimrepro", cluster_tiny_config())
    done = run_snakemake(workdir, "-n", "--cores", "2", CLUSTER_TARGET)
    rules = sorted(rule for rule, _ in planned_jobs(done.stdout))
    assert len(rules) == CLUSTER_JOBS, rules
    assert set(rules) == {"se_curve", "paper1_fig2"}
