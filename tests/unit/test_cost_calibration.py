"""The cost model against measured jobs: every quick-scale job's CPU time within a factor of 2.

benchmarks/results/quick_jobs.json holds every job of one full quick pipeline run
(772 jobs, every rule; a fresh clone at commit b50db00 on 2 cores of a quiet machine),
gathered from their sidecars by benchmarks/gather_job_costs.py:
rule, wildcards, CPU seconds, peak resident memory and, where the data decide
it, the length of the main loop (SGD steps, AMP iterations, right-hand sides).
CPU seconds, not wall time, as ``aimrepro cost`` counts them.

* Each job, with its main loop at the measured length: predicted CPU time
  within a factor of 2 of the measured one.  This tests the prices of the
  work and the start-ups, rule by rule.
* Each rule's jobs together, with the model's expected loop lengths (what
  ``aimrepro cost`` sums): within a factor of 2.
* Memory: no job exceeded the ``mem_mb`` its rule would ask a scheduler for.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
import yaml

from conftest import REPO  # conftest also puts workflow/lib on sys.path

from aimrepro.config import validate_config
from aimrepro_workflow import costs

RECORDS = REPO / "benchmarks" / "results" / "quick_jobs.json"
FACTOR = 2.0

#: The rules the records cover, as the model groups them: every rule of the quick run.
RULES = {"se_curve", "aim_dataset", "amp_run", "amp_summary", "gd_run", "gd_summary", "sgd_run",
         "reference_flow", "theorem1", "landscape", "moment_truncations", "riccati_flow",
         "truncation_error", "untied_sgd_run", "untied_theory", "untied_fast_states",
         "fisher_table", "tokens_se_curve", "se_generalisation", "flow_ensemble", "tied_velocity",
         "untied_velocity", "truncation_radius", "untied_truncation", "figures", "claims"}


@pytest.fixture(scope="module")
def jobs() -> list[dict]:
    return json.loads(RECORDS.read_text())["jobs"]


@pytest.fixture(scope="module")
def model() -> costs.CostModel:
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return costs.CostModel(validate_config(yaml.safe_load((REPO / "config.yaml").read_text()),
                                           schema))


def test_the_records_cover_every_rule(jobs):
    assert {costs._group(job["rule"]) for job in jobs} == RULES
    assert all(job["wildcards"]["scale"] == "quick" and job["cpu_seconds"] > 0 for job in jobs)


def test_every_job_is_predicted_within_a_factor_of_2(model, jobs):
    misses = []
    for job in jobs:
        predicted = model.job(job["rule"], job["wildcards"], loop=job["loop"]).cpu_seconds
        ratio = predicted / job["cpu_seconds"]
        if not 1 / FACTOR <= ratio <= FACTOR:
            misses.append(f"{job['rule']} {job['wildcards']}: predicted {predicted:.3g} s, "
                          f"measured {job['cpu_seconds']:.3g} s")
    assert not misses, f"{len(misses)} of {len(jobs)} jobs:\n" + "\n".join(misses[:20])


def test_each_rules_total_is_predicted_within_a_factor_of_2_from_the_wildcards_alone(model, jobs):
    measured, predicted = defaultdict(float), defaultdict(float)
    for job in jobs:
        group = costs._group(job["rule"])
        measured[group] += job["cpu_seconds"]
        predicted[group] += model.job(job["rule"], job["wildcards"]).cpu_seconds
    ratios = {rule: predicted[rule] / measured[rule] for rule in measured}
    assert all(1 / FACTOR <= ratio <= FACTOR for ratio in ratios.values()), ratios


def test_no_job_outgrew_the_memory_its_rule_asks_for(model, jobs):
    for job in jobs:
        cost = model.job(job["rule"], job["wildcards"])
        assert job["peak_rss_bytes"] <= costs.memory_limit_mb(cost.memory_bytes) * 1e6, job
