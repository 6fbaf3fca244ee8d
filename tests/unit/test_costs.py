"""The cost model (workflow/lib/aimrepro_workflow/costs.py, the kinds' work) on the repository's config."""

from __future__ import annotations

import copy
import math
from collections import Counter

import pytest
import yaml

from conftest import REPO  # conftest also puts workflow/lib on sys.path

from aimrepro import resources as R
from aimrepro.config import validate_config
from aimrepro.paper1.data import DatasetSpec, dataset_bytes
from aimrepro_workflow import costs
from aimrepro_workflow.costs import CostModel, job_cost
from aimrepro_workflow.kinds import KINDS
from aimrepro_workflow.plans import Plan

SCALES = ("quick", "referee", "paper")


def _config() -> dict:
    loaded = yaml.safe_load((REPO / "config.yaml").read_text())
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return validate_config(loaded, schema)


@pytest.fixture(scope="module")
def config() -> dict:
    return _config()


@pytest.fixture(scope="module")
def model(config) -> CostModel:
    return CostModel(config)


@pytest.fixture(scope="module")
def jobs(model) -> dict[str, list[tuple[str, dict]]]:
    return {scale: model.planned_jobs(scale) for scale in SCALES}


def _first(jobs, rule, **match):
    for name, wildcards in jobs:
        if name == rule and all(wildcards.get(k) == v for k, v in match.items()):
            return wildcards
    raise AssertionError(f"no planned {rule} job with {match}")


# --- every planned job ------------------------------------------------------------------


@pytest.mark.parametrize("scale", SCALES)
def test_every_planned_job_has_a_finite_positive_cost(model, jobs, scale):
    for rule, wildcards in jobs[scale]:
        cost = model.job(rule, wildcards)
        assert 0 < cost.cpu_seconds <= cost.cpu_seconds_bound < math.inf, (rule, wildcards)
        assert R.BASE_BYTES <= cost.memory_bytes < math.inf and cost.disk_bytes > 0, rule
        assert cost.threads >= 1


@pytest.mark.parametrize("scale", SCALES)
def test_the_planned_jobs_are_the_plans_jobs_each_once(model, jobs, scale):
    plan = model.plan
    planned = plan.jobs(scale)
    assert [(job.rule, job.kind.path.parse(job.path) if job.kind.path else {"scale": scale})
            for job in planned] == [(rule, w if "scale" in w else {**w, "scale": scale})
                                    for rule, w in jobs[scale]]
    outputs = [job.outputs[0] for job in planned]
    assert len(outputs) == len(set(outputs))
    counts = Counter(costs._group(rule) for rule, _ in jobs[scale])
    amp_runs = {p for c in plan.amp_curves(scale) for per_alpha in c["runs"] for p in per_alpha}
    amp_runs |= set(plan.trend_runs(scale, "amp")) | set(plan.trend_runs(scale, "gd_amp"))
    gd_runs = {p for c in plan.figure2_gd_curves(scale) for per_alpha in c["runs"] for p in per_alpha}
    gd_runs |= set(plan.trend_runs(scale, "gd"))
    tokens_runs = plan.tokens_amp_runs(scale)
    assert counts["amp_run"] == len(amp_runs) and counts["gd_run"] == len(gd_runs)
    # each run reads the dataset of its values (both hardmax channels the hardmax data)
    datasets = {job.inputs()["data"] for job in planned if job.kind.name in ("amp_run", "gd_run", "tokens_amp_run")}
    assert counts["aim_dataset"] == len(datasets) == len({r["data"] for r in tokens_runs} | datasets)
    untied = (plan.figure3_untied_runs(scale) + plan.figureS4_runs(scale) + plan.figureS5_runs(scale))
    plateau = {r["path"] for r in plan.figure3_plateau_runs(scale)} - {r["path"] for r in untied}
    truncation_sgd = plan.untied_truncation_sgd_runs(scale)
    assert truncation_sgd and not {r["path"] for r in truncation_sgd} & {r["path"] for r in untied}
    decay_sgd = plan.untied_decay_sgd_runs(scale)
    assert decay_sgd and not {r["path"] for r in decay_sgd} & {r["path"] for r in untied}
    assert counts["untied_sgd_run"] == (len(untied) + len(plateau) + len(truncation_sgd)
                                        + len(decay_sgd))
    assert counts["untied_decay"] == len(plan.untied_decay_tables(scale)) == 1
    assert counts["untied_theory"] == len(untied) + len(plan.figureS4_limit_runs(scale))
    tied = (plan.figure2_runs(scale) + plan.figureS3_runs(scale) + plan.figureS3_follow_runs(scale)
            + plan.figure1_moment_runs(scale) + plan.figure4_moment_runs(scale))
    strong = {r["path"] for r in plan.strong_recovery_sgd_runs(scale)}
    assert strong and not strong & {r["path"] for r in tied}
    assert counts["sgd_run"] == len({r["path"] for r in tied} | strong)
    assert counts["tokens_amp_run"] == len(tokens_runs)
    assert counts["fisher_table"] == len(plan.fisher_tables(scale)) > 0
    assert counts["tokens_se_curve"] == len(plan.tokens_curves(scale)) > 0
    assert counts["token_law_amp"] == len(plan.token_law_amp_runs(scale)) > 0
    assert counts["token_law_gd"] == len(plan.token_law_gd_runs(scale)) > 0
    assert counts["token_law_theory"] == len(plan.token_law_theories(scale)) > 0
    assert counts["token_law_sgd"] == len(plan.token_law_sgd_runs(scale)) > 0
    two_layer_runs = {r["path"] for r in plan.two_layer_amp_markers(scale) + plan.two_layer_amp_trend_runs(scale)}
    assert counts["two_layer_amp_run"] == len(two_layer_runs) > 0
    assert counts["two_layer_gd_run"] == len(plan.two_layer_gd_runs(scale))
    assert counts["two_layer_table"] == counts["two_layer_se_curve"] == len(plan.two_layer_tables(scale)) > 0
    assert counts["figures"] == len(plan.figures()) == 17
    assert counts["claims"] == len(plan.claim_topics(scale)) + 1


@pytest.mark.parametrize("scale", SCALES)
def test_a_job_made_from_its_wildcards_costs_what_the_planned_job_costs(model, jobs, scale):
    """The rules price a job from its wildcards: a fresh plan (nothing planned) gives the same cost."""
    fresh = Plan(model.config)
    for job in model.plan.jobs(scale):
        if job.kind.path is None:
            continue
        made = fresh.job(job.kind.name, scale, **job.kind.path.values(job.kind.path.parse(job.path)))
        assert made.path == job.path
        assert job_cost(made) == job_cost(job), job


def test_the_paper_scale_has_the_dry_runs_job_count(jobs):
    # 11 958 jobs in `snakemake -n --config scale=paper`, of which one is rule `all`
    assert len(jobs["paper"]) == 11_957


# --- one job --------------------------------------------------------------------------


def test_an_sgd_run_loops_over_its_steps_and_a_stopping_run_expects_part_of_them(model, jobs):
    to_horizon = _first(jobs["quick"], "sgd_run", stop="none", param="tied")
    _, units = model.units("sgd_run", to_horizon)
    steps = R.sgd_steps(param="tied", d=int(to_horizon["d"]), lr=float(to_horizon["lr"]),
                        horizon=float(to_horizon["horizon"]))
    assert units["sgd_step"] == steps
    assert units["normal"] == steps * int(to_horizon["B"]) * int(to_horizon["T"]) * int(to_horizon["d"])
    cost = model.job("sgd_run", to_horizon)
    assert cost.cpu_seconds == cost.cpu_seconds_bound and cost.loop == steps
    stopping = _first(jobs["quick"], "sgd_run", stop="0.5")
    cost = model.job("sgd_run", stopping)
    assert cost.cpu_seconds < cost.cpu_seconds_bound
    assert cost.loop == pytest.approx(costs.TYPICAL["sgd_stop_fraction"] * R.sgd_steps(
        param=stopping["param"], d=int(stopping["d"]), lr=float(stopping["lr"]),
        horizon=float(stopping["horizon"])))


def test_cpu_time_is_linear_in_the_loop(model, jobs):
    wildcards = _first(jobs["paper"], "untied_sgd_run")
    times = [model.job("untied_sgd_run", wildcards, loop=n).cpu_seconds for n in (0, 100, 200)]
    assert times[0] > 0 and times[2] - times[1] == pytest.approx(times[1] - times[0])
    per_step = (times[1] - times[0]) / 100
    d, B = int(wildcards["d"]), int(wildcards["B"])
    # at d = 800, B = 4096 a step is GEMM-bound: 12 B d r flops (r = d) at the GEMM price
    assert per_step == pytest.approx(12.0 * B * d * d * costs.PRICES["flop"], rel=0.2)


def test_an_amp_run_is_bounded_by_max_iter(model, jobs, config):
    wildcards = _first(jobs["quick"], "amp_run")
    cost = model.job("amp_run", wildcards)
    cap = config["paper1"]["amp_solver"]["max_iter"]
    assert cost.loop < cap
    assert cost.cpu_seconds_bound == pytest.approx(model.job("amp_run", wildcards, loop=cap).cpu_seconds)


def test_gd_loops_over_the_configured_steps_with_the_configured_threads(model, jobs, config):
    wildcards = _first(jobs["paper"], "gd_run")
    cost = model.job("gd_run", wildcards)
    assert cost.loop == config["paper1"]["figure2"]["right"]["gd"]["optimizer"]["steps"]
    assert cost.threads == config["scales"]["paper"]["gd"]["threads"] == 4
    assert model.job("gd_run", _first(jobs["quick"], "gd_run")).threads == 1


def test_untied_threads_grow_only_for_the_papers_large_batches(model, jobs):
    assert {model.job("untied_sgd_run", w).threads for r, w in jobs["quick"]
            if r == "untied_sgd_run"} == {1}
    paper = {(w["d"], model.job("untied_sgd_run", w).threads) for r, w in jobs["paper"]
             if r == "untied_sgd_run"}
    assert paper == {("200", 1), ("400", 8), ("800", 8)}


def test_memory_is_the_resources_estimate(model, jobs, config):
    wildcards = _first(jobs["paper"], "gd_run", T="6")
    n_test = config["scales"]["paper"]["data"]["test_samples"]
    expected = R.gd_job(T=6, d=int(wildcards["d"]), rho=float(wildcards["rho"]),
                        alpha=float(wildcards["alpha"]), n_test=n_test,
                        inits=int(wildcards["inits"]),
                        steps=config["paper1"]["figure2"]["right"]["gd"]["optimizer"]["steps"])
    assert model.job("gd_run", wildcards).memory_bytes == expected.bytes


@pytest.mark.parametrize("scale", SCALES)
def test_a_datasets_disk_is_its_arrays_and_temporary_where_the_preset_says(model, jobs, config,
                                                                           scale):
    rule, wildcards = next((r, w) for r, w in jobs[scale] if r.startswith("aim_dataset"))
    assert rule == f"aim_dataset_{scale}"
    spec = DatasetSpec(link="softmax" if wildcards["link"].startswith("softmax") else wildcards["link"],
                       T=int(wildcards["T"]), rho=float(wildcards["rho"]), d=int(wildcards["d"]),
                       alpha=float(wildcards["alpha"]), replicate=int(wildcards["seed"]),
                       n_test=config["scales"][scale]["data"]["test_samples"])
    cost = model.job(rule, {k: v for k, v in wildcards.items() if k != "scale"})
    assert cost.disk_bytes == dataset_bytes(spec) + costs.SIDECAR_BYTES
    assert cost.temporary == config["scales"][scale]["data"]["temporary"]


def test_an_unknown_rule_is_refused(model):
    with pytest.raises(ValueError, match="rule 'all' is not a registered kind"):
        model.job("all", {"scale": "quick"})


def test_an_amp_summary_prices_the_theory_its_table_adds(model, jobs):
    from aimrepro.paper1.generalisation import SOFTMAX_TOKENS

    # the model tells softmax token counts with a generalisation curve by their prices
    assert {int(unit.rsplit("_T", 1)[1]) for unit in costs.PRICES
            if unit.startswith("gen_point_softmax_T")} == set(SOFTMAX_TOKENS)
    summaries = [(rule, w) for rule, w in jobs["quick"] if rule == "amp_summary"]
    assert {w["channel"].split("_beta")[0] for _, w in summaries} == {"hardmax", "hardmax_paper",
                                                                      "softmax"}
    for rule, w in summaries:
        _, units = model.units(rule, w)
        channel, n = w["channel"].split("_beta")[0], float(w["n"])
        se = "se_point_hardmax_paper" if channel == "hardmax_paper" else f"se_point_{channel}"
        assert units[se] == n
        gen = [unit for unit in units if unit.startswith("gen_point_")]
        theory = channel == "hardmax" or (channel == "softmax" and int(w["T"]) in SOFTMAX_TOKENS)
        assert gen == ([f"gen_point_{channel}_T{w['T']}"] if theory else []), w


def test_the_loop_is_read_from_the_diagnostics_that_record_it():
    assert costs.loop_from_diagnostics("sgd_run", {"n_steps": 700}) == 700
    assert costs.loop_from_diagnostics("amp_run", {"iterations": 13}) == 13
    assert costs.loop_from_diagnostics("reference_flow", {"nfev": 344}) == 344
    assert costs.loop_from_diagnostics("untied_theory", {"flow": {"nfev": 398}}) == 398
    assert costs.loop_from_diagnostics("untied_theory", {}) is None
    assert costs.loop_from_diagnostics("gd_run", {"iterations": 1000}) is None


# --- the scheduler's limits -------------------------------------------------------------


def test_limits_cover_the_bound_with_the_margins():
    assert costs.runtime_limit_minutes(0.0, 1) == costs.RUNTIME_GRACE_MINUTES
    one = costs.runtime_limit_minutes(3600.0, 1)
    assert one == costs.RUNTIME_GRACE_MINUTES + math.ceil(costs.RUNTIME_MARGIN * 60)
    four = costs.runtime_limit_minutes(3600.0, 4)
    assert four == costs.RUNTIME_GRACE_MINUTES + math.ceil(
        costs.RUNTIME_MARGIN * 60 / (4 * costs.THREAD_EFFICIENCY))
    assert costs.memory_limit_mb(1e9) == costs.MEMORY_GRACE_MB + math.ceil(costs.MEMORY_MARGIN * 1000)


def test_the_rules_callables_give_the_limits_of_the_model(model, jobs):
    wildcards = _first(jobs["paper"], "gd_run")
    resources = model.resources("gd_run")
    cost = model.job("gd_run", wildcards)
    assert model.threads("gd_run")(wildcards) == 4
    assert resources["mem_mb"](wildcards) == costs.memory_limit_mb(cost.memory_bytes)
    assert resources["runtime"](wildcards, 4) == costs.runtime_limit_minutes(cost.cpu_seconds_bound, 4)


# --- the table --------------------------------------------------------------------------


@pytest.mark.parametrize("scale", SCALES)
def test_the_table_sums_the_jobs(model, jobs, scale):
    table = model.table(scale)
    rows = table["rules"]
    assert sum(row["jobs"] for row in rows) == table["total"]["jobs"] == len(jobs[scale])
    total = sum(model.job(rule, w).cpu_seconds for rule, w in jobs[scale])
    assert table["total"]["cpu_seconds"] == pytest.approx(total)
    assert [row["cpu_seconds"] for row in rows] == sorted((row["cpu_seconds"] for row in rows),
                                                          reverse=True)
    assert table["total"]["peak_memory_bytes"] == max(row["peak_memory_bytes"] for row in rows)
    text = costs.format_table(table)
    for row in rows:
        assert f"\n{row['rule']} " in text
    assert f"{table['total']['jobs']} jobs" in text


def test_the_paper_scales_datasets_are_temporary_disk(model):
    table = model.table("paper")
    dataset = next(row for row in table["rules"] if row["rule"] == "aim_dataset")
    assert dataset["disk_bytes"] == 0 and dataset["temporary_disk_bytes"] > 10e9


# --- every kind --------------------------------------------------------------------------


def test_every_kind_declares_its_path_params_work_and_sizes(model):
    """The registry is complete: each result kind has a path, typed params, a work and named sizes."""
    planned = {job.kind.name for scale in ("quick", "paper") for job in model.plan.jobs(scale)}
    assert planned == set(KINDS)  # the repository's config plans every kind
    for kind in KINDS.values():
        assert callable(kind.params) and callable(kind.work)
        if kind.path is not None:
            assert set(kind.sizes) <= set(kind.path.fields) | set(kind.reads), kind.name
            assert kind.sizes or kind.name in ("amp_summary", "gd_summary"), kind.name


def test_a_larger_config_costs_more(config):
    bigger = copy.deepcopy(config)
    bigger["scales"]["quick"]["paper2"]["figure3"]["d"] *= 2
    before = CostModel(config).table("quick")["total"]["cpu_seconds"]
    after = CostModel(bigger).table("quick")["total"]["cpu_seconds"]
    assert after > before
