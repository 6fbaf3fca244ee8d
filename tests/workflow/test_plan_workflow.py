"""Snakemake plans exactly the jobs that ``aimrepro_workflow.plans.Plan`` spells.

For the repository's config, at both scales: the same rules, the same outputs
per rule (enumerated here independently of the rule files), every output
under its scale's directories, datasets temporary where the preset says so.
The plans are computed once per session (conftest's ``quick_plan``,
``paper_plan``); the planning questions themselves are unit tests of ``Plan``
(tests/unit/test_workflow_lib.py).  Its own module, apart from
test_workflow.py, so that xdist runs the two dry runs beside the tiny run's
tests rather than after them.
"""

from __future__ import annotations

import pytest

from aimrepro_workflow import paths
from aimrepro_workflow.plans import Plan

from conftest import repository_config, validated

pytestmark = pytest.mark.workflow


def planned_outputs(plan: Plan, scale: str) -> dict[str, set[str]]:
    """Per rule, the first output of every job the plan of ``scale`` needs."""
    def column(runs, key="path"):
        return {run[key] for run in runs}

    amp, gd = plan.amp_curves(scale), plan.figure2_gd_curves(scale)
    amp_runs = {path for curve in amp for per_alpha in curve["runs"] for path in per_alpha}
    gd_runs = {path for curve in gd for per_alpha in curve["runs"] for path in per_alpha}
    # the claims' finite-size trends add runs at other d (sharing the figures' where they meet)
    amp_runs |= set(plan.trend_runs(scale, "amp"))
    gd_runs |= set(plan.trend_runs(scale, "gd"))
    tokens_runs = plan.tokens_amp_runs(scale)
    datasets = set()  # the dataset each run reads (rule aim_dataset_<scale>)
    for path in amp_runs:
        fields = paths.AMP_RUN.parse(path)
        channel, _ = fields.pop("channel"), fields.pop("scale")
        link = "hardmax" if channel.startswith("hardmax") else channel
        datasets.add(paths.DATASET.format(scale, link=link, **fields))
    for path in gd_runs:
        fields = paths.GD_RUN.parse(path)
        datasets.add(paths.DATASET.format(scale, **{key: fields[key] for key in
                                                    ("link", "T", "rho", "d", "alpha", "seed")}))
    datasets |= column(tokens_runs, "data")
    tied = (plan.figure2_runs(scale) + plan.figureS3_runs(scale) + plan.figureS3_follow_runs(scale)
            + plan.figure1_moment_runs(scale) + plan.figure4_moment_runs(scale))
    untied = (plan.figure3_untied_runs(scale) + plan.figureS4_runs(scale)
              + plan.figureS5_runs(scale))
    ensembles = (plan.figure2_flow_ensembles(scale) + plan.figureS3_flow_ensembles(scale)
                 + plan.strong_recovery_ensembles(scale))
    moments = plan.figure1_moment_runs(scale) + plan.figure4_moment_runs(scale)
    expected = {
        "se_curve": column(plan.figure1_curves(scale) + plan.figure2_curves(scale)),
        f"aim_dataset_{scale}": datasets,
        "amp_run": amp_runs, "amp_summary": column(amp),
        "gd_run": gd_runs, "gd_summary": column(gd),
        "sgd_run": column(tied) | column(plan.strong_recovery_sgd_runs(scale)),
        "reference_flow": column(plan.figure2_runs(scale) + plan.figureS3_runs(scale)
                                 + plan.figureS3_follow_runs(scale)
                                 + plan.figure1_moment_runs(scale), "flow_path"),
        "theorem1": set(plan.theorem1_paths(scale)),
        "landscape": set(plan.landscape_paths(scale)),
        "moment_truncations": column(moments, "truncations_path"),
        "riccati_flow": column(plan.figure4_moment_runs(scale), "exact_path"),
        "truncation_error": column(plan.figureS6_tables(scale)),
        "untied_sgd_run": (column(untied) | column(plan.figure3_plateau_runs(scale))
                           | column(plan.untied_truncation_sgd_runs(scale))
                           | column(plan.untied_decay_sgd_runs(scale))),
        "untied_theory": column(untied, "flow_path") | column(plan.figureS4_limit_runs(scale),
                                                               "limit_path"),
        "untied_fast_states": {plan.fast_states_path(scale)},
        "se_generalisation": column(plan.figureS2_gen_curves(scale)),
        "fisher_table": column(plan.fisher_tables(scale)),
        "tokens_se_curve": column(plan.tokens_curves(scale)),
        "tokens_amp_run": column(tokens_runs),
        "flow_ensemble": column(ensembles),
        "tied_velocity": column(plan.tied_velocity_tables(scale)),
        "truncation_radius": {plan.figure4_radius(scale)["path"]},
        "untied_velocity": column(plan.untied_velocity_tables(scale)),
        "untied_truncation": column(plan.untied_truncation_tables(scale)),
        "untied_decay": column(plan.untied_decay_tables(scale)),
        "claims": {paths.claims_table(scale)},
    }
    expected = {rule: outputs for rule, outputs in expected.items() if outputs}
    for name in plan.figures():
        expected[name] = {paths.figure_paths(scale, name)["pdf"]}
    for topic, fragment in zip(plan.claim_topics(scale), plan.claim_fragments(scale)):
        expected[f"claims_{topic}"] = {fragment}
    return expected


@pytest.mark.parametrize("scale", ["quick", "paper"])
def test_snakemake_plans_what_the_plan_spells(scale, request, repo_copy):
    snakemake = request.getfixturevalue(f"{scale}_plan")
    plan = Plan(validated(repository_config()))
    expected = planned_outputs(plan, scale)
    assert set(expected) == set(snakemake.rule_counts())
    for rule, outputs in expected.items():
        assert snakemake.outputs(rule) == outputs, rule
    assert all(job.pending for job in snakemake.jobs)
    assert all(output.startswith((f"results/{scale}/", f"figures/{scale}/"))
               for job in snakemake.jobs for output in job.outputs)
    # datasets are temporary where the scale's preset says so
    temporary = plan.config["scales"][scale]["data"]["temporary"]
    datasets = [job for job in snakemake.jobs if job.rule == f"aim_dataset_{scale}"]
    assert {job.statuses[0] for job in datasets} == {"removed temp file" if temporary else "missing"}
    assert not (repo_copy / "results").exists()
