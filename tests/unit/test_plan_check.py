"""The config check of the plan (aimrepro_workflow.checks): every job of a scale against ``limits``.

What the Snakefile runs before any job (conftest's ``validated`` is the same
sequence): the schema, the cross-key checks, then the plan of the scale run:
its number of jobs from the config alone, each job's typed parameters and
memory, the largest job's and the plan's core-hours.  A refusal is one line
naming the key; the table of size-bearing keys below is generated from the
registry (the keys every planned job took its sizes from), not written by hand.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from aimrepro.config import ConfigError, SCALES, validate_config
from aimrepro_workflow.checks import GIB, SE_RHO_RANGE, check_config, check_plan
from aimrepro_workflow.costs import CostModel
from aimrepro_workflow.plans import Plan

from conftest import CONFIG_SCHEMA as SCHEMA, REPO, set_key, size_key_table, validated

CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
#: Every configured scale's plan, checked as a run of that scale is.
ABSURD_COUNT = 10 ** 12


def _mutated(edit, scale="quick") -> dict:
    config = copy.deepcopy(CONFIG)
    config["scale"] = scale
    edit(config)
    return config


def _set(key: str, value):
    """An edit setting the value at a key path (conftest's ``set_key``)."""
    return lambda config: set_key(config, key, value)


def refusal(edit, scale="quick") -> str:
    with pytest.raises(ConfigError) as caught:
        validated(_mutated(edit, scale))
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- the table of size-bearing keys, from the registry -------------------------------------


SIZE_KEYS = size_key_table()


def test_the_table_of_size_keys_covers_every_kind_of_size():
    keys = [key for _, key in SIZE_KEYS]
    assert len(SIZE_KEYS) > 200  # every scale's: quick ~140, the referee's own ~20, paper ~100
    for fragment in ("se_points.softmax", ".d", ".dims[", ".batch", ".records", ".n_samples",
                     ".n_reference", ".max_order", ".n_grid", ".seeds", ".inits", ".test_samples",
                     "amp_solver.max_iter", "optimizer.steps", "trends.amp.hardmax_rho0.2.dims[",
                     "trends.amp.softmax_T3.dims[", "hardmax_tokens.amp.dims[", "fast_records",
                     "untied_velocity.dims[", "untied_strong_recovery.d", "flow_trend.seeds"):
        assert any(fragment in key for key in keys), fragment


@pytest.mark.parametrize(("scale", "key"), SIZE_KEYS, ids=[f"{s}:{k}" for s, k in SIZE_KEYS])
def test_every_size_key_set_absurd_is_refused_in_one_line_naming_it(scale, key):
    message = refusal(_set(key, ABSURD_COUNT), scale)
    assert message.startswith(f"invalid config: {key} = {ABSURD_COUNT}"), message


# --- the issue's examples ---------------------------------------------------------------------


@pytest.mark.parametrize(("scale", "key", "value", "says"), [
    ("quick", "scales.quick.paper2.untied_velocity.dims", [100, 200000],
     "scales.quick.paper2.untied_velocity.dims[1] = 200000: the largest job (untied_velocity) needs"),
    ("quick", "scales.quick.paper2.untied_strong_recovery.d", 100000,
     "scales.quick.paper2.untied_strong_recovery.d = 100000: the largest job (untied_decay) needs"),
    ("paper", "scales.paper.hardmax_tokens.amp.dims", [40, 200000],
     "scales.paper.hardmax_tokens.amp.dims[1] = 200000: a job (tokens_amp_run) cannot run: alpha d^2"),
    # these crashed the old check (KeyError: 'd')
    ("paper", "scales.paper.trends.amp.softmax_T3.dims", [100, 150, 10**9],
     "scales.paper.trends.amp.softmax_T3.dims[2] = 1000000000: a job (amp_run) cannot run"),
    ("paper", "scales.paper.trends.amp.hardmax_rho0.2.dims", [100, 150, 10**9],
     "scales.paper.trends.amp.hardmax_rho0.2.dims[2] = 1000000000: a job (amp_run) cannot run"),
    ("paper", "scales.paper.hardmax_tokens.n_reference", 10**12,
     "scales.paper.hardmax_tokens.n_reference = 1000000000000: the largest job (fisher_table) needs"),
    # science keys: a value that is not a size of its own
    ("quick", "paper1.amp_solver.max_iter", 10**12,
     "paper1.amp_solver.max_iter = 1000000000000: the largest job (amp_run) needs"),
    ("quick", "paper1.figure2.right.gd.optimizer.steps", 10**12,
     "paper1.figure2.right.gd.optimizer.steps = 1000000000000: the largest job (gd_run) needs"),
    ("quick", "paper2.figure2.horizon", 1e12, "paper2.figure2.horizon = 1e+12: the largest job (sgd_run)"),
    ("quick", "scales.quick.paper2.figure2.lr", 1e-12, "scales.quick.paper2.figure2.lr = 1e-12: the largest job"),
    ("quick", "paper2.figureS3.eta", 1e-12, "paper2.figureS3.eta = 1e-12: the largest job (sgd_run)"),
    ("quick", "paper1.figure2.right.amp.runs[0].alpha.hi", 1e6,
     "paper1.figure2.right.amp.runs[0].alpha.hi = 1e+06: a job (amp_run) cannot run"),
    ("quick", "scales.quick.paper2.untied_flow.method", "Radau",
     "scales.quick.paper2.untied_flow.method = Radau: the largest job (untied_theory) needs"),
    ("quick", "paper2.figure3.rho", 1e4, "paper2.figure3.rho = 10000: the largest job (untied_"),
])
def test_the_issues_absurd_values_are_refused_naming_the_key(scale, key, value, says):
    assert refusal(_set(key, value), scale).startswith("invalid config: " + says)


def test_an_absurd_seed_count_is_refused_before_any_job_is_planned():
    config = _mutated(_set("scales.paper.hardmax_tokens.amp.seeds", 10**6), "paper")
    validate_config(config, SCHEMA)
    check_config(config)
    plan = Plan(config)
    with pytest.raises(ConfigError, match=r"^invalid config: scales.paper.hardmax_tokens.amp.seeds = 1000000: "
                                          r"the plan of scale paper has ~1.2e\+07 jobs"):
        check_plan(config, ["paper"], plan=plan)
    assert ("jobs", ("paper",)) not in plan._memo  # refused by the count: the plan was never made


def test_an_inherited_size_is_named_where_it_is_written():
    """The referee preset extends the quick one: its Figure 3 d is the quick one's."""
    message = refusal(_set("scales.quick.paper2.figure3.d", 10**6), "referee")
    assert message.startswith("invalid config: scales.quick.paper2.figure3.d = 1000000: the largest job")


def test_the_limits_are_configurable():
    config = _mutated(_set("scales.quick.paper2.figure2.batch", 10**9))
    config["limits"] = {"job_memory_gb": 10**6, "job_core_hours": 10**9, "plan_core_hours": 10**12}
    validated(config)  # ~1.5e3 GiB: now admitted
    assert refusal(lambda c: c.__setitem__("limits", {"job_memory_gb": 0.01})).startswith(
        "invalid config: limits.job_memory_gb = 0.01: the largest job (fisher_table) needs ~0.377 GiB "
        "(estimate) at ordinary sizes")
    assert refusal(lambda c: c.__setitem__("limits", {"plan_jobs": 100})).startswith(
        "invalid config: scales.quick.amp.hardmax.seeds = 3: the plan of scale quick has ~1.21e+03 jobs "
        "and replicates (300 of them amp_run), above limits.plan_jobs = 100")
    assert "above limits.plan_core_hours = 0.1" in refusal(
        lambda c: c.__setitem__("limits", {"plan_core_hours": 0.1}))


def test_every_scale_fits_the_default_limits_with_room():
    config = validate_config(copy.deepcopy(CONFIG), SCHEMA)
    limits = SCHEMA["properties"]["limits"]["properties"]
    model = CostModel(config)
    for scale in SCALES:
        check_plan(config, [scale], plan=model.plan)
        table = model.table(scale)["total"]
        assert table["peak_memory_bytes"] / GIB < limits["job_memory_gb"]["default"] / 4, scale
        assert table["largest_job_cpu_seconds"] / 3600 < limits["job_core_hours"]["default"] / 10, scale
        assert table["jobs"] < limits["plan_jobs"]["default"] / 4, scale
        assert table["cpu_seconds"] / 3600 < limits["plan_core_hours"]["default"] / 10, scale
        assert sum(count.jobs for count in model.plan.count(scale)) >= sum(
            1 for job in model.plan.jobs(scale) if job.kind.name in ("amp_run", "gd_run", "sgd_run",
                                                                      "untied_sgd_run", "tokens_amp_run"))


def test_the_count_bounds_each_family_it_counts():
    """Plan.count bounds, from the config alone, the jobs its planners make (no drift between the two)."""
    config = validate_config(copy.deepcopy(CONFIG), SCHEMA)
    plan = Plan(config)
    for scale in SCALES:
        counts = {count.family: count.jobs for count in plan.count(scale)}
        assert counts["figure2"] == 2 * len(plan.figure2_runs(scale))
        assert counts["figureS5"] == 2 * len(plan.figureS5_runs(scale))
        assert counts["figure1"] == len(plan.figure1_moment_runs(scale)) * 3
        amp = plan.amp_curves(scale)
        assert counts.get("figure1_amp", 0) + counts.get("figure2_amp", 0) >= 2 * sum(
            len(c["alphas"]) * len(c["seeds"]) for c in amp)
        assert counts["strong_recovery"] == sum(len(e["seeds"]) for e in plan.strong_recovery_ensembles(scale))


@pytest.mark.parametrize(("key", "value"), [
    ("paper1.figure1.left.rhos[0]", 1e-5),
    ("paper1.figure2.left.rhos[1]", 1e15),
    ("paper1.figure2.right.rho", 1e-9),
    ("paper1.figure1.amp.first_index[0].rho", 1e-6),
])
def test_se_width_ratios_outside_the_validated_range_are_refused(key, value):
    assert refusal(_set(key, value)).startswith(
        f"invalid config: {key} = {value:g}; allowed: a number in [0.0001, 1e+14]")


def test_the_se_range_is_that_of_the_spectra_module():
    from aimrepro.paper1 import spectra

    assert SE_RHO_RANGE == (spectra.RHO_MIN, spectra.RHO_MAX)


def test_the_untied_truncations_sgd_needs_both_its_learning_rate_and_batch():
    def drop_batch(config):
        del config["scales"]["quick"]["paper2"]["untied_truncation"]["batch"]

    message = refusal(drop_batch)
    assert message.startswith("invalid config: scales.quick.paper2.untied_truncation = ")
    assert "lr and batch together or neither" in message
