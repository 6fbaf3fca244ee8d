"""Datasets, GAMP-RIE runs and their markers through the Snakemake command line, on a tiny config.

(a) every dataset, run and summary has a complete sidecar; the figures read
    the summaries; claims.md carries the AMP rows;
(b) a dataset rebuilt from scratch has the same bytes (seeded per dataset);
(c) adding a seed plans only the new seed's jobs and what reads them;
(d) a cross-key error in the AMP plan stops the run with one line.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from conftest import copy_repository, run_snakemake, science_api_missing
from test_workflow import TINY_CONFIG, planned_jobs

pytestmark = pytest.mark.workflow

AMP_CONFIG = copy.deepcopy(TINY_CONFIG)
AMP_CONFIG["seed"] = 17
AMP_CONFIG["scales"]["quick"]["amp"] = {"hardmax": {"d": 16, "seeds": 2, "alpha_stride": 12},
                                        "softmax": {"d": 16, "seeds": 2, "alpha_stride": 14}}
AMP_CONFIG["scales"]["quick"]["data"] = {"test_samples": 40, "temporary": False}
AMP_CONFIG["paper1"]["figure1"]["amp"] = {
    "channels": ["hardmax"], "alpha": {"spacing": "log", "lo": 0.03, "hi": 8, "n": 32},
    "last_index": 25, "first_index": [{"rho": 0.5, "index": 13}]}
AMP_CONFIG["paper1"]["figure2"]["right"]["amp"] = {
    "beta": 1, "runs": [{"T": 2, "alpha": {"spacing": "log", "lo": 0.05, "hi": 0.3, "n": 16},
                         "last_index": 14}]}
AMP_CONFIG["paper1"]["amp_solver"] = {"damping": 0.5, "tol": 1e-5, "max_iter": 100}

#: alpha indices 13 and 25 of the hardmax grid, 0 and 14 of the softmax one
HARDMAX_DIR = "results/quick/amp/hardmax_T2_rho0.5_d16"
SOFTMAX_DIR = "results/quick/amp/softmax_beta1_T2_rho0.5_d16"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def amp_run(tmp_path_factory):
    if science_api_missing():
        pytest.skip(science_api_missing())
    workdir = copy_repository(tmp_path_factory.mktemp("amp") / "aimrepro", AMP_CONFIG)
    run_snakemake(workdir, "--cores", "2")
    return workdir


def test_every_simulation_result_has_a_sidecar_and_feeds_the_figures(amp_run):
    datasets = sorted((amp_run / "results/quick/data").glob("*/*.npz"))
    runs = sorted((amp_run / "results/quick/amp").glob("*/alpha*.npz"))
    assert len(datasets) == 8 and len(runs) == 8
    for path in [*datasets, *runs]:
        sidecar = json.loads(path.with_suffix(".json").read_text())
        assert sidecar["outputs"][str(path.relative_to(amp_run))] == sha256(path)
        assert sidecar["seed"] == 17
        assert "converged" in sidecar["diagnostics"] or sidecar["rule"] == "aim_dataset_quick"
    run_sidecar = json.loads(runs[0].with_suffix(".json").read_text())
    [data_input] = run_sidecar["inputs"]
    assert data_input.startswith("results/quick/data/") and data_input.endswith(runs[0].name)
    assert "src/aimrepro/paper1/amp.py" in run_sidecar["code"]
    for summary, figure in ((HARDMAX_DIR, "paper1_fig1"), (SOFTMAX_DIR, "paper1_fig2")):
        table = amp_run / summary / "summary_seeds2.csv"
        assert table.exists() and table.with_suffix(".json").exists()
        figure_sidecar = json.loads((amp_run / f"figures/quick/{figure}.json").read_text())
        assert f"{summary}/summary_seeds2.csv" in figure_sidecar["inputs"]
    claims = (amp_run / "results/quick/claims.md").read_text()
    for row in ("p1-amp-se-hardmax", "p1-amp-se-softmax", "p1-amp-softmax-perfect-recovery",
                "p1-amp-beats-published-hardmax"):
        assert row in claims
    [not_measured] = [line for line in claims.splitlines() if line.startswith("Not measured")]
    assert "paper1_gd (no GD sizes in scales.quick.gd)" in not_measured  # no GD in this config
    assert "paper1_amp" not in not_measured


def test_a_dataset_rebuilt_from_scratch_has_the_same_bytes(amp_run):
    dataset = amp_run / "results/quick/data/hardmax_T2_rho0.5_d16/alpha0.312222_seed1.npz"
    before = sha256(dataset)
    dataset.unlink()
    # the target first: --allowed-rules takes several values and would swallow it
    run_snakemake(amp_run, str(dataset.relative_to(amp_run)), "--cores", "1", "--allowed-rules", "aim_dataset_quick")
    assert sha256(dataset) == before


def test_adding_a_seed_plans_only_the_new_seed(amp_run):
    config_path = amp_run / "config.yaml"
    original = config_path.read_text()
    changed = yaml.safe_load(original)
    changed["scales"]["quick"]["amp"]["softmax"]["seeds"] = 3
    config_path.write_text(yaml.safe_dump(changed, sort_keys=False))
    try:
        done = run_snakemake(amp_run, "-n", "--cores", "2")
    finally:
        config_path.write_text(original)
    jobs = planned_jobs(done.stdout)
    new_runs = [out for rule, out in jobs if rule in ("aim_dataset_quick", "amp_run")]
    assert len(new_runs) == 4 and all(out.endswith("_seed2.npz") for out in new_runs)
    assert {rule for rule, _ in jobs} == {"aim_dataset_quick", "amp_run", "amp_summary", "paper1_fig2",
                                          "claims_paper1_amp", "claims", "all"}


def test_an_amp_plan_error_stops_with_one_line(amp_run, tmp_path):
    bad = yaml.safe_load((amp_run / "config.yaml").read_text())
    bad["paper1"]["figure1"]["amp"]["first_index"][0]["rho"] = 0.3
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    done = run_snakemake(amp_run, "-n", "--cores", "1", "--configfile", str(path), check=False)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if "invalid config" in line]
    assert lines == ["aimrepro: invalid config: paper1.figure1.amp.first_index[0].rho = 0.3; "
                     "allowed: one of left.rhos [0.5]"]
