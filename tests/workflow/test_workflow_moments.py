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
import shutil

import pytest
import yaml

from aimrepro_workflow.plans import Plan

from conftest import (PAPER2_FIGURES, paper2_figure_inputs, paper2_targets, run_cli, run_snakemake,
                      snakemake_plan, tiny_paper2_config, validated)

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


def test_diff_after_one_changed_config_value_names_exactly_the_results_that_depend_on_it(tiny_paper2_run,
                                                                                          tmp_path):
    """``aimrepro diff`` of a run and its copy rerun with Figure 1's step size changed (issue: diff)."""
    before = tiny_paper2_run
    after = tmp_path / "after"
    shutil.copytree(before, after, symlinks=True)  # results, sidecars and Snakemake's records, mtimes kept
    config = yaml.safe_load((after / "config.yaml").read_text())
    config["scales"]["quick"]["paper2"]["figure1"]["lr"] *= 0.8
    (after / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    targets = [*paper2_targets("dynamics", "moments", "untied"), "results/quick/claims.md"]
    rerun = snakemake_plan(after, *targets).pending()
    assert {job.rule for job in rerun} == {"sgd_run", "paper2_fig1", "claims_paper2_moments", "claims"}
    run_snakemake(after, "--cores", "2", *targets)
    compared = run_cli("diff", "--json", str(before), str(after))
    assert compared.returncode == 1, compared.stdout
    not_same = {result["path"]: result["status"] for result in json.loads(compared.stdout)["results"]
                if result["status"] != "same"}
    # every output of a job that reran, but the sidecars and logs, which diff does not count as results
    made = {path for job in rerun for path in job.outputs
            if not path.endswith(".json") and "/logs/" not in path}
    assert set(not_same) == made
    new_runs = {job.output for job in rerun if job.rule == "sgd_run"}
    assert len(new_runs) == 2 and all(not_same[path] == "only in B" for path in new_runs)
    assert all(status == "differs" for path, status in not_same.items() if path not in new_runs)
