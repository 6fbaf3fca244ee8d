"""Gradient descent of paper 1 through the Snakemake command line, on the tiny paper-1 run.

conftest's ``tiny_run`` (``tiny_paper1_config``: GD markers on Figure 2, T = 2 and 3):
(a) every GD run and summary has a complete sidecar, reads the datasets of
    rule aim_dataset, and feeds Figure 2; claims.md carries the GD rows;
(b) ``aimrepro gd --seed <config seed> --replicate K`` reproduces a pipeline
    run's numbers (same dataset, same students).

That a bad GD size stops the run with one line naming the key is a unit test
of the Snakefile's validation (tests/unit/test_workflow_lib.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from conftest import TINY_SEED, run_cli, sha256

pytestmark = pytest.mark.workflow

#: alpha indices 15 and 31 of the grid: 0.017357 and 0.3
GD_DIRS = {T: f"results/quick/gd/softmax_beta1_T{T}_rho0.5_d12_inits3" for T in (2, 3)}


def test_every_gd_result_has_a_sidecar_and_feeds_figure_2(tiny_run):
    runs = sorted(p for T in GD_DIRS for p in (tiny_run / GD_DIRS[T]).glob("alpha*.npz"))
    assert len(runs) == 8  # 2 T x 2 alphas x 2 draws
    for path in runs:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["outputs"][str(path.relative_to(tiny_run))] == sha256(path)
        assert sidecar["seed"] == TINY_SEED and sidecar["diagnostics"]["converged"] is True
        assert sidecar["diagnostics"]["n_diverged"] == 0
        [data_input] = sidecar["inputs"]
        assert data_input.startswith("results/quick/data/softmax_beta1_") and data_input.endswith(path.name)
        assert "src/aimrepro/paper1/gd.py" in sidecar["code"]
        assert sidecar["params"]["solver_settings"]["steps"] == 60
        with np.load(path) as archive:
            assert archive["loss_curve"].shape == (3, 61) and archive["W_first"].shape == (12, 6)
            assert archive["S_bar"].shape == (12, 12)
    figure = json.loads((tiny_run / "figures/quick/paper1_fig2.json").read_text())
    for T, directory in GD_DIRS.items():
        summary = tiny_run / directory / "summary_seeds2.csv"
        assert summary.exists() and summary.with_suffix(".json").exists()
        assert f"{directory}/summary_seeds2.csv" in figure["inputs"]
    assert figure["diagnostics"]["n_diverged_gd_students"] == 0
    claims = (tiny_run / "results/quick/claims.md").read_text()
    for row in ("p1-gd-averaged-se", "p1-gd-single-twice-mmse", "p1-gd-zero-error-onset"):
        assert row in claims
    [not_measured] = [line for line in claims.splitlines() if line.startswith("Not measured")]
    assert "paper1_gd" not in not_measured


def test_the_cli_reproduces_a_pipeline_run(tiny_run):
    path = tiny_run / GD_DIRS[2] / "alpha0.3_seed1.npz"
    test_samples = yaml.safe_load((tiny_run / "config.yaml").read_text())["scales"]["quick"]["data"][
        "test_samples"]
    done = run_cli("gd", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "--d", "12", "--inits", "3",
                   "--steps", "60", "--lr", "0.1", "--seed", str(TINY_SEED), "--replicate", "1",
                   "--test-samples", str(test_samples), timeout=300)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    with np.load(path) as archive:
        for key in ("single_error", "averaged_error", "train_loss", "generalisation_error"):
            assert record[key] == float(archive[key]), key
