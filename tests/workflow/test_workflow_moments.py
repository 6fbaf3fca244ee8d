"""The moment-hierarchy part of the workflow (paper2_moments.smk), on a tiny config in a repository copy.

(a) the default config plans Figures 1, 4, S6 at both scales, with the
    paper's d = 400, lr 0.01, batch 512 at paper scale;
(b) a tiny config runs them end to end: every table, figure and the claims
    fragment has its sidecar, and the claim rows are there;
(c) a paper2.figure1 section without its size preset fails with one line.
"""

from __future__ import annotations

import copy
import json

import pytest

from test_workflow import planned_jobs
from test_workflow_paper2 import tiny_paper2_config

from conftest import copy_repository, run_snakemake

pytestmark = pytest.mark.workflow

TINY_MOMENTS = {
    "figure1": {"T": 2, "rho": 0.5, "normalisation": "aim", "weight_decay": 0.0, "horizon": 0.8,
                "orders": [2, 3, 4], "short_time": 0.3},
    "figure4": {"rho": 0.5, "normalisation": "aim", "prefactor": 1.0, "weight_decay": 0.0,
                "horizon": 0.06, "orders": [2, 4, 6], "short_time": 0.02},
    "figureS6": {"rho": 0.5, "normalisation": "aim", "prefactor": 1.0, "matrix_scale": 0.3,
                 "weight_decays": [0.0, 4.0], "t_min": 0.01, "horizon": 1.0,
                 "times": [0.01, 0.1, 1.0], "short_time": 0.03},
}
TINY_MOMENT_SIZES = {
    "figure1": {"d": 20, "batch": 16, "lr": 0.01, "seeds": 2, "records": 9},
    "figure4": {"d": 20, "batch": 16, "lr": 0.002, "seeds": 2, "records": 7},
    "figureS6": {"d": 16, "max_order": 5, "records": 7},
}
MOMENT_TARGETS = [f"figures/quick/paper2_{name}.pdf" for name in ("fig1", "fig4", "figS6")]


def tiny_moments_config() -> dict:
    config = tiny_paper2_config()
    config["paper2"].update(copy.deepcopy(TINY_MOMENTS))
    for scale in ("quick", "paper"):
        config["scales"][scale]["paper2"].update(copy.deepcopy(TINY_MOMENT_SIZES))
    return config


def test_default_config_plans_the_moment_figures_at_both_scales(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2")
    rules = {rule for rule, _ in planned_jobs(done.stdout)}
    assert {"moment_truncations", "riccati_flow", "truncation_error", "sgd_run",
            "paper2_fig1", "paper2_fig4", "paper2_figS6", "claims_paper2_moments"} <= rules
    paper = run_snakemake(repo_copy, "-n", "--cores", "2", "--config", "scale=paper")
    outputs = [out for rule, out in planned_jobs(paper.stdout)
               if rule == "sgd_run"]
    # Figures 1 and 4 at the paper's settings (docs/paper2.md §6): d = 400, lr 0.01, batch 512
    assert "results/paper/sgd/tied_softmax_T2_rho0.5_aim_c0.5_d400/" \
           "lr0.01_B512_wd0_t2_n81_stopnone_seed0.csv" in outputs
    assert "results/paper/sgd/tied_linear_T1_rho0.5_aim_c1_d400/" \
           "lr0.01_B512_wd0_t0.1_n81_stopnone_seed2.csv" in outputs


def test_tiny_moment_figures_run_end_to_end(tmp_path):
    workdir = copy_repository(tmp_path / "aimrepro", tiny_moments_config())
    run_snakemake(workdir, "--cores", "2", *MOMENT_TARGETS, "results/quick/claims/paper2_moments.tsv")
    tables = sorted((workdir / "results/quick/moments").glob("*/*/*.csv"))
    # truncations: 2 replicates x (Figure 1, Figure 4); S6: one table per weight decay
    assert len(tables) == 4 + 2
    for table in tables:
        sidecar = json.loads(table.with_suffix(".json").read_text())
        assert sidecar["diagnostics"]["converged"], table
        assert "src/aimrepro/paper2/moments.py" in sidecar["code"]
    exact = sorted((workdir / "results/quick/theory/riccati").glob("*/*.csv"))
    runs = sorted((workdir / "results/quick/sgd").glob("*_c1_d20/*.csv"))
    assert len(exact) == len(runs) == 2
    for target in MOMENT_TARGETS:
        pdf = workdir / target
        assert pdf.exists() and pdf.with_suffix(".png").exists()
        assert json.loads(pdf.with_suffix(".json").read_text())["inputs"], target
    claims = (workdir / "results/quick/claims/paper2_moments.tsv").read_text()
    for claim_id in ("p2-trunc-exponential-linear", "p2-trunc-horizon-gamma0",
                     "p2-trunc-horizon-weight-decay", "p2-fig1-flow-matches-sgd",
                     "p2-fig1-trunc-exponential", "p2-fig1-more-orders-better",
                     "p2-fig4-riccati-matches-sgd", "p2-fig4-more-orders-better"):
        assert claim_id in claims, claim_id


def test_moment_section_without_its_preset_is_rejected(tmp_path):
    config = tiny_moments_config()
    del config["scales"]["quick"]["paper2"]["figure4"]
    # a --configfile would be merged into config.yaml (which has the preset): replace it
    workdir = copy_repository(tmp_path / "aimrepro", config)
    done = run_snakemake(workdir, "-n", "--cores", "2", check=False)
    assert done.returncode != 0
    messages = [line for line in done.stderr.splitlines() if "invalid config" in line]
    assert messages == ["aimrepro: invalid config: scales.quick.paper2.figure4 is missing; "
                        "allowed: the sizes of paper2.figure4 at scale quick (see config.yaml)"]
