"""The Snakemake workflow, driven through its command line in a copy of the repository.

(a) Snakemake plans exactly what ``Plan`` spells: test_plan_workflow.py;
(b) the tiny paper-1 run (theory, AMP and GD; conftest's ``tiny_run``):
    every result and figure has its sidecar with the required fields,
    figures carry the commit and config hash, ``aimrepro provenance`` prints
    a figure's inputs, claims.md names what the config does not measure
    (the report of this run: test_report.py);
(c) after (b), a change reruns exactly what depends on it;
(d) an invalid config fails before any job with one line naming key and
    range: a config file, the command line (and, in test_amp_workflow.py, a
    cross-key error); the messages themselves are unit tests of the
    validation the Snakefile runs (tests/unit/test_configcheck.py,
    tests/unit/test_workflow_lib.py).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil

import pytest
import yaml

from aimrepro.figures.style import read_figure_metadata

from conftest import (config_error_lines, copy_repository, edited_config, git, repository_config, run_cli,
                      run_snakemake, sha256, snakemake_plan)

pytestmark = pytest.mark.workflow

SIDECAR_FIELDS = {"schema", "outputs", "rule", "params", "seed", "config_hash", "inputs",
                  "code", "diagnostics", "aimrepro_version", "git", "versions", "host",
                  "started", "ended", "wall_seconds"}


# --- (b) -------------------------------------------------------------------------


def test_tiny_run_writes_every_result_with_a_complete_sidecar(tiny_run):
    results = sorted(path for path in (tiny_run / "results" / "quick").rglob("*")
                     if path.suffix in (".csv", ".npz", ".tsv", ".md"))
    # figure 1: left, right, rho -> 0; figure 2: 2 rho, rho = inf, right panel.
    assert len([path for path in results if "/se/" in str(path)]) == 3 + 4
    figures = [tiny_run / "figures" / "quick" / f"paper1_fig{i}.{ext}"
               for i in (1, 2) for ext in ("pdf", "png")]
    head = git(tiny_run, "rev-parse", "HEAD") if shutil.which("git") else None
    for output in [*results, *figures]:
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
        if head:
            assert sidecar["git"] == {"commit": head, "dirty": False}


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


def test_tiny_run_figures_embed_commit_and_config_hash(tiny_run):
    for name in ("paper1_fig1", "paper1_fig2"):
        sidecar = json.loads((tiny_run / "figures" / "quick" / f"{name}.json").read_text())
        # the inputs are exactly what the figure drew: SE curves, AMP and GD summaries
        drawn = [curve["path"] for key in ("curves", "amp_curves", "gd_curves")
                 for curve in sidecar["params"].get(key, [])]
        assert sorted(sidecar["inputs"]) == sorted(drawn)
        for ext in ("pdf", "png"):
            metadata = read_figure_metadata(tiny_run / "figures" / "quick" / f"{name}.{ext}")
            assert metadata["commit"] == sidecar["git"]["commit"]
            assert metadata["config_hash"] == sidecar["config_hash"]
    thresholds = json.loads((tiny_run / "figures/quick/paper1_fig1.json").read_text())[
        "diagnostics"]["weak_recovery_thresholds"]
    assert set(thresholds) == {"hardmax"}


def test_provenance_command_prints_a_figures_inputs(tiny_run):
    done = run_cli("provenance", "figures/quick/paper1_fig2.pdf", cwd=tiny_run, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("figures/quick/paper1_fig2.pdf  (rule paper1_fig2")
    sidecar = json.loads((tiny_run / "figures/quick/paper1_fig2.json").read_text())
    rule_of = {"se": "se_curve", "amp": "amp_summary", "gd": "gd_summary"}
    for path in sidecar["inputs"]:
        rule = rule_of[path.split("/")[2]]
        assert any(path in line and f"rule {rule}" in line for line in lines[1:]), path
    assert "[" not in done.stdout  # no missing/modified/no-sidecar flags


def test_claims_table_names_what_this_scale_does_not_measure(tiny_run):
    text = (tiny_run / "results" / "quick" / "claims.md").read_text()
    assert text.startswith("# Claims of the papers, measured")
    assert "Scale **quick**" in text
    [not_measured] = [line for line in text.splitlines() if line.startswith("Not measured")]
    assert not_measured == (
        "Not measured at this scale: "
        "paper1_hardmax_tokens (no paper1.hardmax_tokens in the config); "
        "paper1_two_layer (no paper1.two_layer in the config); "
        "paper2_dynamics (no paper2.figure2, figureS1, figureS2, figureS3 in the config); "
        "paper2_moments (no paper2.figure1, figure4, figureS6 in the config); "
        "paper2_untied (no paper2.figure3, figureS4, figureS5 in the config); "
        "paper1_token_laws (no paper1.token_laws in the config); "
        "paper2_token_laws (no paper2.token_laws in the config)")


# --- (c) -------------------------------------------------------------------------


def test_nothing_to_do_after_a_complete_run(tiny_run):
    assert snakemake_plan(tiny_run).pending() == []
    # and Snakemake's own dry run says so
    done = run_snakemake(tiny_run, "-n")
    assert "Nothing to be done" in done.stdout + done.stderr


def test_changing_one_rho_reruns_only_its_curve_and_figure(tiny_run):
    def edit(config):
        config["paper1"]["figure2"]["left"]["rhos"] = [0.5, 2.0]  # 1.0 -> 2.0

    with edited_config(tiny_run, edit):
        plan = snakemake_plan(tiny_run)
    # the theory claims measure alpha_PR for every rho of this list, so they rerun too
    assert plan.pending_pairs() == sorted([
        ("se_curve", "results/quick/se/softmax_T2_rho2/alphapr_lin_0.01_1_n4.csv"),
        ("paper1_fig2", "figures/quick/paper1_fig2.pdf"),
        ("claims_paper1_theory", "results/quick/claims/paper1_theory.tsv"),
        ("claims", "results/quick/claims.md"),
    ])


def test_changing_one_hardmax_rho_reruns_only_its_curve_and_figure(tiny_run):
    def edit(config):
        config["paper1"]["figure1"]["right"]["rhos"] = [2.0]  # 0.5 -> 2.0

    with edited_config(tiny_run, edit):
        plan = snakemake_plan(tiny_run)
    assert plan.pending_pairs() == sorted([
        ("se_curve", "results/quick/se/hardmax_T2_rho2/alphabar_log_0.2_6_n3.csv"),
        ("paper1_fig1", "figures/quick/paper1_fig1.pdf"),
    ])


def _planned_after_edit(repo, relative):
    """Jobs per rule a dry run plans after a real edit of one file (restored afterwards).

    A real edit: Snakemake ignores a newer mtime when the content is unchanged.
    """
    module = repo / relative
    original, stat = module.read_bytes(), module.stat()
    try:
        module.write_bytes(original + b"\n# an edit\n")
        plan = snakemake_plan(repo)
    finally:
        module.write_bytes(original)
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return plan.rule_counts()


def test_editing_a_science_module_reruns_the_results_that_use_it(tiny_run):
    # docs/design.md "Reruns": code inputs make an SE edit rerun the SE curves, the AMP and GD
    # runs (they record the SE error of their point), their summaries, the figures and claims
    # that read them; not the datasets, whose code does not import the SE.
    rules = _planned_after_edit(tiny_run, "src/aimrepro/paper1/state_evolution.py")
    assert rules == {"se_curve": 7, "amp_run": 8, "amp_summary": 2, "gd_run": 8, "gd_summary": 2,
                     "paper1_fig1": 1, "paper1_fig2": 1, "claims_paper1_theory": 1,
                     "claims_paper1_amp": 1, "claims_paper1_gd": 1, "claims": 1}


def test_editing_the_plotting_code_reruns_only_the_figures(tiny_run):
    rules = _planned_after_edit(tiny_run, "src/aimrepro/figures/style.py")
    assert rules == {"paper1_fig1": 1, "paper1_fig2": 1}


# --- (d) -------------------------------------------------------------------------


def assert_refused_before_any_job(done, workdir, message):
    assert done.returncode != 0
    lines = config_error_lines(done)
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"aimrepro: invalid config: {message}")
    assert "Building DAG" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert not (workdir / "results").exists()


def test_a_schema_error_in_a_config_file_stops_before_any_job(repo_copy, tmp_path):
    config = repository_config()
    config["paper1"]["figure1"]["left"]["rhos"][0] = -1
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    done = run_snakemake(repo_copy, "-n", "--configfile", str(bad), check=False)
    assert_refused_before_any_job(done, repo_copy,
                                  "paper1.figure1.left.rhos[0] = -1; allowed: a finite number > 0")


def test_a_config_yaml_that_is_not_yaml_is_one_line_with_its_line_and_column(tmp_path):
    workdir = copy_repository(tmp_path / "repo")
    text = (workdir / "config.yaml").read_text()
    (workdir / "config.yaml").write_text("scale: quick\n  seed: [1\n" + text)
    done = run_snakemake(workdir, "-n", check=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith(
        "aimrepro: config file config.yaml, line 2, column 7: not valid YAML")
    assert "Traceback" not in done.stderr and "Building DAG" not in done.stdout + done.stderr
    # The remedy: the file as it was.
    (workdir / "config.yaml").write_text(text)
    run_snakemake(workdir, "-n")


def test_a_file_in_the_place_of_the_results_directory_is_one_line_before_any_job(tmp_path):
    workdir = copy_repository(tmp_path / "repo")
    (workdir / "results").write_text("a stray file")
    done = run_snakemake(workdir, "-n", check=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        f"aimrepro: results/quick cannot be made: {workdir / 'results'} is a file, not a directory; "
        "move it away")
    assert "Traceback" not in done.stderr and "Building DAG" not in done.stdout + done.stderr
    (workdir / "results").unlink()   # the remedy, verbatim
    run_snakemake(workdir, "-n")


def test_invalid_scale_on_the_command_line(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--config", "scale=huge", check=False)
    assert_refused_before_any_job(done, repo_copy,
                                  "scale = 'huge'; allowed: one of 'quick', 'referee', 'paper'")
