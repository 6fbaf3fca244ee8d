"""Datasets, GAMP-RIE runs and their markers through the Snakemake command line, on the tiny paper-1 run.

conftest's ``tiny_run`` (``tiny_paper1_config``: AMP on both figures of paper 1):
(a) every dataset, run and summary has a complete sidecar; the figures read
    the summaries; claims.md carries the AMP rows;
(b) a dataset rebuilt from scratch has the same bytes (seeded per dataset);
(c) adding a seed plans only the new seed's jobs and what reads them;
(d) a cross-key error in the AMP plan stops the run with one line.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from conftest import TINY_SEED, config_error_lines, edited_config, run_snakemake, sha256, snakemake_plan

pytestmark = pytest.mark.workflow

#: alpha indices 13 and 25 of the hardmax grid, 0 and 14 of the softmax one
HARDMAX_DIR = "results/quick/amp/hardmax_T2_rho0.5_d16"
SOFTMAX_DIR = "results/quick/amp/softmax_beta1_T2_rho0.5_d16"


def test_every_simulation_result_has_a_sidecar_and_feeds_the_figures(tiny_run):
    datasets = sorted((tiny_run / "results/quick/data").glob("*_d16/*.npz"))  # GD's have d = 12
    runs = sorted((tiny_run / "results/quick/amp").glob("*/alpha*.npz"))
    assert len(datasets) == 8 and len(runs) == 8
    for path in [*datasets, *runs]:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["outputs"][str(path.relative_to(tiny_run))] == sha256(path)
        assert sidecar["seed"] == TINY_SEED
        assert "converged" in sidecar["diagnostics"] or sidecar["rule"] == "aim_dataset_quick"
    run_sidecar = json.loads(runs[0].with_suffix(".json").read_text())
    [data_input] = run_sidecar["inputs"]
    assert data_input.startswith("results/quick/data/") and data_input.endswith(runs[0].name)
    assert "src/aimrepro/paper1/amp.py" in run_sidecar["code"]
    for summary, figure in ((HARDMAX_DIR, "paper1_fig1"), (SOFTMAX_DIR, "paper1_fig2")):
        table = tiny_run / summary / "summary_seeds2.csv"
        assert table.exists() and table.with_suffix(".json").exists()
        figure_sidecar = json.loads((tiny_run / f"figures/quick/{figure}.json").read_text())
        assert f"{summary}/summary_seeds2.csv" in figure_sidecar["inputs"]
    claims = (tiny_run / "results/quick/claims.md").read_text()
    for row in ("p1-amp-se-hardmax", "p1-amp-se-softmax", "p1-amp-softmax-perfect-recovery",
                "p1-amp-beats-published-hardmax"):
        assert row in claims
    [not_measured] = [line for line in claims.splitlines() if line.startswith("Not measured")]
    assert "paper1_amp" not in not_measured


def test_a_dataset_rebuilt_from_scratch_has_the_same_bytes(tiny_run):
    dataset = tiny_run / "results/quick/data/hardmax_T2_rho0.5_d16/alpha0.312222_seed1.npz"
    before, stat = sha256(dataset), dataset.stat()
    dataset.unlink()
    # the target first: --allowed-rules takes several values and would swallow it
    run_snakemake(tiny_run, str(dataset.relative_to(tiny_run)), "--cores", "1",
                  "--allowed-rules", "aim_dataset_quick")
    assert sha256(dataset) == before
    # leave the shared run complete: the same bytes, and no newer than the runs that read it
    os.utime(dataset, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert snakemake_plan(tiny_run).pending() == []


def test_adding_a_seed_plans_only_the_new_seed(tiny_run):
    def edit(config):
        config["scales"]["quick"]["amp"]["softmax"]["seeds"] = 3

    with edited_config(tiny_run, edit):
        plan = snakemake_plan(tiny_run)
    new_runs = [output for rule, output in plan.pending_pairs()
                if rule in ("aim_dataset_quick", "amp_run")]
    assert len(new_runs) == 4 and all(out.endswith("_seed2.npz") for out in new_runs)
    assert set(plan.rule_counts()) == {"aim_dataset_quick", "amp_run", "amp_summary", "paper1_fig2",
                                       "claims_paper1_amp", "claims"}


def test_an_amp_plan_error_stops_with_one_line(tiny_run, tmp_path):
    bad = yaml.safe_load((tiny_run / "config.yaml").read_text())
    bad["paper1"]["figure1"]["amp"]["first_index"][0]["rho"] = 0.3
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    done = run_snakemake(tiny_run, "-n", "--configfile", str(path), check=False)
    assert done.returncode != 0
    assert config_error_lines(done) == [
        "aimrepro: invalid config: paper1.figure1.amp.first_index[0].rho = 0.3; "
        "allowed: one of left.rhos [0.5]"]
    assert "Building DAG" not in done.stdout + done.stderr and "Traceback" not in done.stderr
