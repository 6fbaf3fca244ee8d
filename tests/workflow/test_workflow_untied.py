"""The untied-attention part of the workflow (paper2_untied.smk), on a tiny config in a repository copy.

(a) the default config plans Figures 3, S4, S5 at both scales, with the
    paper's d = 800, lr 0.01 and batch 4096 at paper scale;
(b) a tiny untied config runs end to end: SGD runs, population flows, the
    slaved limit, the fast-state table, the three figures and the claims
    fragment, each with its sidecar;
(c) the untied sections come together: one missing is one clear line.
"""

from __future__ import annotations

import copy
import json

import pytest

from test_workflow import planned_jobs
from test_workflow_paper2 import tiny_paper2_config

from conftest import copy_repository, run_snakemake

pytestmark = pytest.mark.workflow

_SCIENCE = {"T": 1, "rho": 1.0, "normalisation": "unit_variance", "init_scales": [1.0, 0.9]}
TINY_UNTIED = {
    "figure3": {**_SCIENCE, "links": ["h1", "h2"], "teacher_mean": 0.0, "weight_decay": 0.0,
                "horizon": 0.1},
    "figureS4": {**_SCIENCE, "link": "h2", "teacher_mean": 2.0, "init_mean": 0.5,
                 "fast_horizon": 2.0, "horizon": 0.06},
    "figureS5": {**_SCIENCE, "link": "h2", "teacher_means": [0.0, 2.0], "fast_horizon": 1.0,
                 "horizon": 0.2, "stop_overlap": 0.5},
}
TINY_UNTIED_SIZES = {
    "figure3": {"d": 16, "batch": 16, "seeds": 1, "records": 5, "lr": {"h1": 0.02, "h2": 0.02}},
    "figureS4": {"dims": [12, 20], "batch": 16, "seeds": 1, "records": 4, "fast_records": 4,
                 "lr": 0.02},
    "figureS5": {"dims": [12, 20], "batch": 16, "seeds": 2, "records": 5, "fast_records": 3,
                 "lr": 0.02, "n_grid": 9},
    "untied_flow": {"method": "RK45", "rtol": 1e-4},
}
UNTIED_TARGETS = [f"figures/quick/paper2_{name}.pdf" for name in ("fig3", "figS4", "figS5")]


def tiny_untied_config() -> dict:
    config = tiny_paper2_config()
    config["paper2"].update(copy.deepcopy(TINY_UNTIED))
    for scale in ("quick", "paper"):
        config["scales"][scale]["paper2"].update(copy.deepcopy(TINY_UNTIED_SIZES))
    return config


def test_default_config_plans_the_untied_figures_at_both_scales(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2")
    rules = {rule for rule, _ in planned_jobs(done.stdout)}
    assert {"untied_sgd_run", "untied_theory", "untied_fast_states", "paper2_fig3",
            "paper2_figS4", "paper2_figS5", "claims_paper2_untied"} <= rules
    paper = run_snakemake(repo_copy, "-n", "--cores", "2", "--config", "scale=paper")
    outputs = [out for rule, out in planned_jobs(paper.stdout) if rule == "untied_sgd_run"]
    # Figure 3 at the paper's settings (docs/paper2.md §6): d = 800, lr 0.01, batch 4096
    assert ("results/paper/untied/sgd/h3_T1_rho1_unit_variance_sU1_sV0.9_m20_m0none_d800/"
            "lr0.01_B4096_wd0_tau1.5_n151_fast0x0_stopnone_seed2.csv") in outputs


@pytest.fixture(scope="module")
def tiny_untied_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tiny_untied") / "aimrepro"
    copy_repository(workdir, tiny_untied_config())
    run_snakemake(workdir, "--cores", "2", *UNTIED_TARGETS,
                  "results/quick/claims/paper2_untied.tsv")
    return workdir


def test_tiny_untied_run_writes_results_with_sidecars(tiny_untied_run):
    root = tiny_untied_run
    runs = sorted((root / "results/quick/untied/sgd").glob("*/*.csv"))
    assert len(runs) == 2 + 2 + 2 * 2 * 2       # Figure 3, S4, S5
    for run in runs:
        sidecar = json.loads(run.with_suffix(".json").read_text())
        assert sidecar["rule"] == "untied_sgd_run"
        assert sidecar["params"]["spec"]["param"] == "untied"
        assert {"blew_up", "cpu_seconds", "final_symmetric_overlap"} <= set(sidecar["diagnostics"])
    flows = sorted((root / "results/quick/untied/flow").glob("*/*.csv"))
    assert len(flows) == len(runs)
    for flow in flows:
        diagnostics = json.loads(flow.with_suffix(".json").read_text())["diagnostics"]
        assert {"fast_fixed_point", "flow", "initial", "dichotomy"} <= set(diagnostics)
    assert len(list((root / "results/quick/untied/limit").glob("*/*.csv"))) == 1
    table = next((root / "results/quick/untied/fast_states").glob("*.csv"))
    assert json.loads(table.with_suffix(".json").read_text())["diagnostics"]["threshold"] \
        == pytest.approx(2 ** 0.5, abs=1e-8)
    for target in UNTIED_TARGETS:
        pdf = root / target
        assert pdf.exists() and pdf.with_suffix(".png").exists()
        assert json.loads(pdf.with_suffix(".json").read_text())["inputs"]
    claims = (root / "results/quick/claims/paper2_untied.tsv").read_text()
    for claim_id in ("p2-untied-fast-collapse-h2", "p2-untied-escape-grows-symmetric-h2",
                     "p2-untied-sign-h2", "p2-untied-fig3-order"):
        assert claim_id in claims


def test_untied_sections_come_together(tmp_path):
    # --configfile would be merged over config.yaml, so the copy's config.yaml lacks the key
    config = tiny_untied_config()
    del config["paper2"]["figureS4"]
    workdir = copy_repository(tmp_path / "aimrepro", config)
    done = run_snakemake(workdir, "-n", "--cores", "2", check=False)
    assert done.returncode != 0
    assert [line for line in done.stderr.splitlines() if "invalid config" in line] == [
        "aimrepro: invalid config: paper2.figureS4 is missing; allowed: a mapping (the untied "
        "figures need paper2.figure3, figureS4, figureS5 together)"]
