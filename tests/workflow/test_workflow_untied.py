"""The untied-attention part of the workflow (paper2_untied.smk), on the tiny paper-2 run.

conftest's ``tiny_paper2_run`` runs every figure of paper 2 on a tiny config;
here: the SGD runs, population flows, the slaved limit, the fast-state table,
the replicate tables (eq. 42, the truncation, the late decay), Figures 3, S4, S5
and the claims fragment, each with its sidecar.

That the default config plans Figures 3, S4, S5 at both scales, with the
paper's d = 800, lr 0.01 and batch 4096 at paper scale, is checked once for
every figure (test_plan_workflow.py, and ``Plan`` in tests/unit/test_workflow_lib.py);
that the untied sections come together (one missing is one clear line) is a
unit test of the Snakefile's validation (test_workflow_lib.py).
"""

from __future__ import annotations

import json

import pytest

from aimrepro_workflow.plans import Plan

from conftest import PAPER2_FIGURES, paper2_figure_inputs, tiny_paper2_config, validated

pytestmark = pytest.mark.workflow


def test_tiny_untied_run_writes_results_with_sidecars(tiny_paper2_run):
    root = tiny_paper2_run
    runs = sorted((root / "results/quick/untied/sgd").glob("*/*.csv"))
    # Figure 3, S4, S5; the truncation table's replicates; the decay table's at two step sizes
    assert len(runs) == 2 + 2 + 2 * 2 * 2 + 2 + 2 * 2
    for run in runs:
        sidecar = json.loads(run.with_suffix(".json").read_text())
        assert sidecar["rule"] == "untied_sgd_run"
        assert sidecar["params"]["spec"]["param"] == "untied"
        assert {"blew_up", "cpu_seconds", "final_symmetric_overlap"} <= set(sidecar["diagnostics"])
    flows = sorted((root / "results/quick/untied/flow").glob("*/*.csv"))
    assert len(flows) == 2 + 2 + 2 * 2 * 2
    for family, rule in (("velocity", "untied_velocity"), ("truncation", "untied_truncation"),
                         ("decay", "untied_decay")):
        table, = (root / "results/quick/untied" / family).glob("*/*.csv")
        sidecar = json.loads(table.with_suffix(".json").read_text())
        assert sidecar["rule"] == rule and sidecar["diagnostics"]["converged"], family
    for flow in flows:
        diagnostics = json.loads(flow.with_suffix(".json").read_text())["diagnostics"]
        assert {"fast_fixed_point", "flow", "initial", "dichotomy"} <= set(diagnostics)
    assert len(list((root / "results/quick/untied/limit").glob("*/*.csv"))) == 1
    table = next((root / "results/quick/untied/fast_states").glob("*.csv"))
    assert json.loads(table.with_suffix(".json").read_text())["diagnostics"]["threshold"] \
        == pytest.approx(2 ** 0.5, abs=1e-8)
    plan = Plan(validated(tiny_paper2_config("moments", "untied")))
    for name in PAPER2_FIGURES["untied"]:
        pdf = root / "figures" / "quick" / f"{name}.pdf"
        assert pdf.exists() and pdf.with_suffix(".png").exists()
        sidecar = json.loads(pdf.with_suffix(".json").read_text())
        assert set(sidecar["inputs"]) == paper2_figure_inputs(plan, "quick", name), name
    claims = (root / "results/quick/claims/paper2_untied.tsv").read_text()
    for claim_id in ("p2-untied-fast-collapse-h2", "p2-untied-escape-grows-symmetric-h2",
                     "p2-untied-sign-h2", "p2-untied-fig3-order", "p2-untied-eq42-h1-m20",
                     "p2-untied-truncation-h1-m20.5", "p2-untied-truncation-sgd-h1-m20.5",
                     "p2-untied-strong-rate-h1-m20", "p2-untied-strong-rate-sgd-h1-m20"):
        assert claim_id in claims
