"""The rules' resources are the cost model's, and the model knows every job Snakemake plans.

A dry run of the repository's config at the quick scale lists every job with
its rule, output, wildcards, threads and resources; the model
(workflow/lib/aimrepro_workflow/costs.py) must plan the same jobs, rule by
rule, and give each the same threads, mem_mb and runtime.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from conftest import REPO, run_snakemake

from aimrepro.config import validate_config
from aimrepro_workflow import costs

pytestmark = pytest.mark.workflow


def dry_run_jobs(output: str) -> list[dict]:
    """rule, output, wildcards, threads and resources of every job in a dry run's listing."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        header = re.match(r"(?:local)?rule (\w+):", block)
        if not header:
            continue
        output_line = re.search(r"^\s+output: ([^,\n]+)", block, re.MULTILINE)
        wildcards = re.search(r"^\s+wildcards: (.+)$", block, re.MULTILINE)
        threads = re.search(r"^\s+threads: (\d+)$", block, re.MULTILINE)
        resources = re.search(r"^\s+resources: (.+)$", block, re.MULTILINE)
        jobs.append({
            "rule": header.group(1),
            "output": output_line.group(1) if output_line else None,
            "wildcards": dict(item.split("=", 1) for item in wildcards.group(1).split(", "))
            if wildcards else {},
            "threads": int(threads.group(1)) if threads else 1,
            "resources": dict(item.split("=", 1) for item in resources.group(1).split(", "))
            if resources else {},
        })
    return jobs


@pytest.fixture(scope="module")
def planned(repo_copy):
    done = run_snakemake(repo_copy, "-n", "--cores", "2")
    return dry_run_jobs(done.stdout)


@pytest.fixture(scope="module")
def model():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return costs.CostModel(validate_config(yaml.safe_load((REPO / "config.yaml").read_text()),
                                           schema))


def test_the_model_plans_every_job_of_the_dry_run(planned, model):
    snakemake = Counter(job["rule"] for job in planned if job["rule"] != "all")
    assert Counter(rule for rule, _ in model.planned_jobs("quick")) == snakemake
    outputs = {job["output"] for job in planned if job["rule"] != "all"}
    assert {job.outputs[0] for job in model.plan.jobs("quick")} == outputs


def test_every_jobs_threads_and_resources_are_the_models(planned, model):
    checked = Counter()
    for job in planned:
        if job["rule"] == "all":
            continue
        wildcards = job["wildcards"] or {"scale": "quick"}
        cost = model.job(job["rule"], wildcards)
        assert job["threads"] == cost.threads, job
        assert int(job["resources"]["mem_mb"]) == costs.memory_limit_mb(cost.memory_bytes), job
        assert int(job["resources"]["runtime"]) == costs.runtime_limit_minutes(
            cost.cpu_seconds_bound, cost.threads), job
        checked[costs._group(job["rule"])] += 1
    assert len(checked) == 35 and sum(checked.values()) == len(planned) - 1  # every rule kind
