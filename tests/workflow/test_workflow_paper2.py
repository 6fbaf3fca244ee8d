"""The paper-2 dynamics part of the workflow (paper2_dynamics.smk), on the tiny paper-2 run.

conftest's ``tiny_paper2_run`` runs every figure of paper 2 on a tiny config;
here: every SGD run, reference flow, table, figure of Figures 2, S1–S3 and the
claims fragment has its sidecar with diagnostics, and claims.md lists the
paper-2 rows.

That the default config plans paper 2's figures at both scales, with the
paper's d and batch at paper scale, is checked once for every figure
(test_plan_workflow.py, and ``Plan`` in tests/unit/test_workflow_lib.py); that a
stop overlap below the recovery threshold fails with one line is a unit test
of the Snakefile's validation (test_workflow_lib.py).
"""

from __future__ import annotations

import json

import pytest

from aimrepro_workflow.plans import Plan

from conftest import PAPER2_FIGURES, paper2_figure_inputs, tiny_paper2_config, validated

pytestmark = pytest.mark.workflow


def relative_files(root, pattern) -> set[str]:
    return {str(path.relative_to(root)) for path in root.glob(pattern)}


def test_tiny_paper2_run_writes_results_with_sidecars(tiny_paper2_run):
    root = tiny_paper2_run
    plan = Plan(validated(tiny_paper2_config("moments", "untied")))
    figure2, figureS3 = plan.figure2_runs("quick"), plan.figureS3_runs("quick")
    moments = plan.figure1_moment_runs("quick") + plan.figure4_moment_runs("quick")
    # Figure 2: 2 params x 2 links x 2 seeds; S3: 2 params x 1 link x 2 d x 2 seeds
    assert len(figure2) == len(figureS3) == 8
    runs = {run["path"] for run in figure2 + figureS3}
    assert relative_files(root, "results/quick/sgd/*/*.csv") == runs | {run["path"] for run in moments}
    for run in sorted(runs):
        sidecar = json.loads((root / run).with_suffix(".json").read_text())
        assert sidecar["rule"] == "sgd_run"
        assert {"blew_up", "cpu_seconds", "weak_recovery_time", "n_steps"} <= set(
            sidecar["diagnostics"])
        assert sidecar["seed"] in (0, 1)
        assert "src/aimrepro/paper2/sgd.py" in sidecar["code"]
    flows = {run["flow_path"] for run in figure2 + figureS3}  # one per SGD replicate
    assert len(flows) == 8 + 8
    assert relative_files(root, "results/quick/theory/*_flow/*/*.csv") == flows | {
        run["flow_path"] for run in plan.figure1_moment_runs("quick")}
    for flow in flows:
        assert json.loads((root / flow).with_suffix(".json").read_text())["diagnostics"]["converged"]
    for name in PAPER2_FIGURES["dynamics"]:
        pdf = root / "figures" / "quick" / f"{name}.pdf"
        assert pdf.exists() and pdf.with_suffix(".png").exists()
        sidecar = json.loads(pdf.with_suffix(".json").read_text())
        assert set(sidecar["inputs"]) == paper2_figure_inputs(plan, "quick", name), name
    claims = (root / "results/quick/claims.md").read_text()
    for claim_id in ("p2-thm1-gap-softmax", "p2-thm1-linear-exact", "p2-eq23-cross-gradient-sign",
                     "p2-tied-twr-flat-h1", "p2-direct-twr-grows-h1", "p2-fig2-both-recover-h1",
                     "p2-fig2-direct-uninformative-h2", "p2-tied-samples-d2logd-h1"):
        assert claim_id in claims, claim_id
    # no simulation sizes for paper 1 in this config: its AMP and GD claims are named as unmeasured
    [not_measured] = [line for line in claims.splitlines() if line.startswith("Not measured")]
    assert not_measured == ("Not measured at this scale: paper1_amp (no AMP sizes in scales.quick.amp); "
                            "paper1_gd (no GD sizes in scales.quick.gd); "
                            "paper1_hardmax_tokens (no paper1.hardmax_tokens in the config); "
                            "paper1_two_layer (no paper1.two_layer in the config); "
                            "paper1_token_laws (no paper1.token_laws in the config); "
                            "paper2_token_laws (no paper2.token_laws in the config)")


def test_the_registry_spells_each_sgd_run_as_its_script_does(tiny_paper2_run):
    """The registry maps an SGD path's fields (c, B, wd, records, stop) to the science's ProblemSpec
    and SGDSettings once (aimrepro_workflow.kinds.paper2); each run's script builds them from the same
    wildcards and records them in its sidecar: the two spellings must be one."""
    from dataclasses import asdict

    plan = Plan(validated(tiny_paper2_config("moments", "untied")))
    sgd = [job for job in plan.jobs("quick") if job.kind.name in ("sgd_run", "untied_sgd_run")]
    assert {job.kind.name for job in sgd} == {"sgd_run", "untied_sgd_run"}
    for job in sgd:
        recorded = json.loads((tiny_paper2_run / job.path).with_suffix(".json").read_text())["params"]
        assert asdict(job.params.problem) == recorded["spec"], job
        settings = asdict(job.params.settings)
        if job.kind.name == "untied_sgd_run":  # recorded on its fast and slow grids (record_times)
            del settings["n_records"], settings["record_times"]
            del recorded["settings"]["n_records"], recorded["settings"]["record_times"]
        assert settings == recorded["settings"], job
