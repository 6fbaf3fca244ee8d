"""The moment-hierarchy part of the workflow (paper2_moments.smk), on the tiny paper-2 run.

conftest's ``tiny_paper2_run`` runs every figure of paper 2 on a tiny config;
here: every table, figure of Figures 1, 4, S6 and the claims fragment has its
sidecar, and the claim rows are there.

That the default config plans these figures at both scales, with the paper's
d = 400, lr 0.01, batch 512 at paper scale, is checked once for every figure
(test_plan_workflow.py, and ``Plan`` in tests/unit/test_workflow_lib.py); that a
moment section without its size preset fails with one line is a unit test of
the Snakefile's validation (test_workflow_lib.py).
"""

from __future__ import annotations

import json

import pytest

from aimrepro_workflow.plans import Plan

from conftest import PAPER2_FIGURES, paper2_figure_inputs, tiny_paper2_config, validated

pytestmark = pytest.mark.workflow


def test_tiny_moment_figures_run_end_to_end(tiny_paper2_run):
    root = tiny_paper2_run
    tables = sorted((root / "results/quick/moments").glob("*/*/*.csv"))
    # truncations: 2 replicates x (Figure 1, Figure 4); S6: one table per weight decay; Figure 4's radius
    assert len(tables) == 4 + 2 + 1
    for table in tables:
        sidecar = json.loads(table.with_suffix(".json").read_text())
        assert sidecar["diagnostics"]["converged"], table
        assert "src/aimrepro/paper2/moments.py" in sidecar["code"]
    exact = sorted((root / "results/quick/theory/riccati").glob("*/*.csv"))
    runs = sorted((root / "results/quick/sgd").glob("*_c1_d20/*.csv"))
    assert len(exact) == len(runs) == 2
    plan = Plan(validated(tiny_paper2_config("moments", "untied")))
    for name in PAPER2_FIGURES["moments"]:
        pdf = root / "figures" / "quick" / f"{name}.pdf"
        assert pdf.exists() and pdf.with_suffix(".png").exists()
        sidecar = json.loads(pdf.with_suffix(".json").read_text())
        assert set(sidecar["inputs"]) == paper2_figure_inputs(plan, "quick", name), name
    claims = (root / "results/quick/claims/paper2_moments.tsv").read_text()
    for claim_id in ("p2-trunc-exponential-linear", "p2-trunc-horizon-gamma0",
                     "p2-trunc-horizon-weight-decay", "p2-fig1-flow-matches-sgd",
                     "p2-fig1-trunc-exponential", "p2-fig1-more-orders-better",
                     "p2-fig4-riccati-matches-sgd", "p2-fig4-more-orders-better",
                     "p2-fig4-truncation-radius"):
        assert claim_id in claims, claim_id
