"""Gradient descent of paper 1 through the Snakemake command line, on a tiny config.

(a) every GD run and summary has a complete sidecar, reads the datasets of
    rule aim_dataset, and feeds Figure 2; claims.md carries the GD rows;
(b) ``aimrepro gd --seed <config seed> --replicate K`` reproduces a pipeline
    run's numbers (same dataset, same students);
(c) a bad GD size stops the run with one line naming the key.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess

import numpy as np
import pytest
import yaml

from conftest import copy_repository, executable, run_snakemake, science_api_missing
from test_workflow import TINY_CONFIG

pytestmark = pytest.mark.workflow

GD_CONFIG = copy.deepcopy(TINY_CONFIG)
GD_CONFIG["seed"] = 23
GD_CONFIG["scales"]["quick"]["gd"] = {"d": 12, "seeds": 2, "inits": 3, "alpha_stride": 16, "alphaT_max": 3.2}
GD_CONFIG["scales"]["quick"]["data"] = {"test_samples": 30, "temporary": False}
GD_CONFIG["paper1"]["figure2"]["right"]["gd"] = {
    "beta": 1, "Ts": [2, 3], "alpha": {"spacing": "log", "lo": 0.0012, "hi": 0.3, "n": 32},
    "optimizer": {"lr": 0.1, "steps": 60, "init_scale": 1.0}}

#: alpha indices 15 and 31 of the grid: 0.017357 and 0.3
GD_DIRS = {T: f"results/quick/gd/softmax_beta1_T{T}_rho0.5_d12_inits3" for T in (2, 3)}


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def gd_run(tmp_path_factory):
    if science_api_missing():
        pytest.skip(science_api_missing())
    workdir = copy_repository(tmp_path_factory.mktemp("gd") / "aimrepro", GD_CONFIG)
    run_snakemake(workdir, "--cores", "2")
    return workdir


def test_every_gd_result_has_a_sidecar_and_feeds_figure_2(gd_run):
    runs = sorted(p for T in GD_DIRS for p in (gd_run / GD_DIRS[T]).glob("alpha*.npz"))
    assert len(runs) == 8  # 2 T x 2 alphas x 2 draws
    for path in runs:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["outputs"][str(path.relative_to(gd_run))] == sha256(path)
        assert sidecar["seed"] == 23 and sidecar["diagnostics"]["converged"] is True
        assert sidecar["diagnostics"]["n_diverged"] == 0
        [data_input] = sidecar["inputs"]
        assert data_input.startswith("results/quick/data/softmax_beta1_") and data_input.endswith(path.name)
        assert "src/aimrepro/paper1/gd.py" in sidecar["code"]
        assert sidecar["params"]["solver_settings"]["steps"] == 60
        with np.load(path) as archive:
            assert archive["loss_curve"].shape == (3, 61) and archive["W_first"].shape == (12, 6)
            assert archive["S_bar"].shape == (12, 12)
    figure = json.loads((gd_run / "figures/quick/paper1_fig2.json").read_text())
    for T, directory in GD_DIRS.items():
        summary = gd_run / directory / "summary_seeds2.csv"
        assert summary.exists() and summary.with_suffix(".json").exists()
        assert f"{directory}/summary_seeds2.csv" in figure["inputs"]
    assert figure["diagnostics"]["n_diverged_gd_students"] == 0
    claims = (gd_run / "results/quick/claims.md").read_text()
    for row in ("p1-gd-averaged-se", "p1-gd-single-twice-mmse", "p1-gd-zero-error-onset"):
        assert row in claims
    [not_measured] = [line for line in claims.splitlines() if line.startswith("Not measured")]
    assert "paper1_amp (no AMP sizes in scales.quick.amp)" in not_measured  # no AMP in this config
    assert "paper1_gd" not in not_measured


def test_the_cli_reproduces_a_pipeline_run(gd_run):
    path = gd_run / GD_DIRS[2] / "alpha0.3_seed1.npz"
    done = subprocess.run([executable("aimrepro"), "gd", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "--d", "12",
                           "--inits", "3", "--steps", "60", "--lr", "0.1", "--seed", "23", "--replicate", "1",
                           "--test-samples", "30"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    with np.load(path) as archive:
        for key in ("single_error", "averaged_error", "train_loss", "generalisation_error"):
            assert record[key] == float(archive[key]), key


def test_a_bad_gd_size_stops_with_one_line(gd_run, tmp_path):
    bad = yaml.safe_load((gd_run / "config.yaml").read_text())
    bad["scales"]["quick"]["gd"]["inits"] = 0
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    done = run_snakemake(gd_run, "-n", "--cores", "1", "--configfile", str(path), check=False)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if "invalid config" in line]
    assert len(lines) == 1 and lines[0].startswith("aimrepro: invalid config: scales.quick.gd.inits = 0; allowed:")
