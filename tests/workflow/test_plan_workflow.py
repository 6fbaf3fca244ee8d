"""Snakemake plans exactly the jobs of ``aimrepro_workflow.plans.Plan``, each of a registered kind.

For the repository's config, at every scale: the jobs of Snakemake's graph
(``snakemake --summary``, computed once per session: conftest's
``quick_plan``, ``referee_plan``, ``paper_plan``) are the plan's jobs, output
for output, and each comes from a rule that is a registered result kind
(``aimrepro_workflow.kinds``) whose job has a path, typed params, a memory
estimate and a cost.  The planning questions themselves are unit tests of
``Plan`` (tests/unit/test_workflow_lib.py).  Its own module, apart from
test_workflow.py, so that xdist runs the dry runs beside the tiny run's tests.
"""

from __future__ import annotations

import math

import pytest

from aimrepro import resources as R
from aimrepro.config import SCALES
from aimrepro_workflow.costs import job_cost
from aimrepro_workflow.kinds import KINDS
from aimrepro_workflow.plans import Plan

from conftest import repository_config, validated

pytestmark = pytest.mark.workflow


@pytest.mark.parametrize("scale", SCALES)
def test_every_job_of_the_graph_is_a_registered_kind_with_path_params_memory_and_cost(scale, request):
    snakemake = request.getfixturevalue(f"{scale}_plan")
    plan = Plan(validated({**repository_config(), "scale": scale}))
    planned = {job.outputs[0]: job for job in plan.jobs(scale)}
    assert len(planned) == len(plan.jobs(scale))  # each job once
    assert {job.output for job in snakemake.jobs} == set(planned)
    for node in snakemake.jobs:
        kind = KINDS.of_rule(node.rule)  # ValueError: a rule that is not a registered kind
        job = planned[node.output]
        assert job.kind is kind and job.rule == node.rule
        assert set(node.outputs) == set(job.outputs), node
        if kind.path is not None:
            assert kind.path.values(kind.path.parse(node.output)) == {
                name: job.values[name] for name in kind.path.fields}
        assert job.params is not None
        cost = job_cost(job)
        assert R.BASE_BYTES <= cost.memory_bytes < math.inf, node
        assert 0 < cost.cpu_seconds <= cost.cpu_seconds_bound < math.inf, node
        assert cost.disk_bytes > 0 and cost.threads >= 1
    assert all(job.pending for job in snakemake.jobs)
    assert all(output.startswith((f"results/{scale}/", f"figures/{scale}/"))
               for job in snakemake.jobs for output in job.outputs)


@pytest.mark.parametrize("scale", SCALES)
def test_datasets_are_temporary_where_the_preset_says(scale, request, repo_copy):
    snakemake = request.getfixturevalue(f"{scale}_plan")
    config = validated({**repository_config(), "scale": scale})
    temporary = config["scales"][scale]["data"]["temporary"]
    datasets = [job for job in snakemake.jobs if job.rule == f"aim_dataset_{scale}"]
    assert datasets and {job.statuses[0] for job in datasets} == {
        "removed temp file" if temporary else "missing"}
    assert not (repo_copy / "results").exists()
