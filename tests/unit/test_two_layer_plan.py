"""The two-layer study in the workflow layer (docs/paper1.md §14): its kinds, plan, checks and costs.

From the repository's config and the tiny one (conftest's ``tiny_two_layer_config``): one
table and SE curve per skip, each curve reading its table; the figure reads the drawn
skips only; GAMP-RIE markers per drawn skip, alpha and seed; the trend and GD where the
preset sizes them; the typed params are the science's specs; a bad config is refused in
one line naming its key.
"""

from __future__ import annotations

import copy

import pytest

from aimrepro.config import ConfigError
from aimrepro.paper1.two_layer.model import TwoLayerSpec
from aimrepro_workflow.costs import job_cost
from aimrepro_workflow.kinds import KINDS
from aimrepro_workflow.kinds.paper1 import TwoLayerRunJob, TwoLayerTableJob
from aimrepro_workflow.plans import Plan

from conftest import repository_config, set_key, tiny_theory_config, tiny_two_layer_config, validated


def _plan(config: dict, scale: str = "quick") -> Plan:
    return Plan(validated({**config, "scale": scale}))


def test_one_table_and_one_curve_per_skip_each_curve_reading_its_table():
    plan = _plan(tiny_two_layer_config())
    tables, curves = plan.two_layer_tables("quick"), plan.two_layer_curves("quick")
    assert [t["skip"] for t in tables] == [c["skip"] for c in curves] == [0.0, 1.0, 10.0]
    for table, curve in zip(tables, curves):
        assert table["path"] == f"results/quick/fisher/two_layer_rho0.5_c{table['skip']:g}/k3_q5_r2_seed17.npz"
        wildcards = KINDS["two_layer_se_curve"].path.parse(curve["path"])  # as the rule receives them
        assert plan.job_of("two_layer_se_curve", wildcards).inputs() == {"table": table["path"]}
        assert curve["path"].endswith("alpha_lin_0.05_0.43_n4_k3_q5_r2_seed17.csv")
    params = plan._planned_jobs("quick")[tables[1]["path"]].params
    assert params == TwoLayerTableJob(rho=0.5, skip=1.0, nodes=3, log2_samples=5, replicates=2, seed=17)


def test_the_figure_reads_the_drawn_skips_and_the_markers():
    plan = _plan(tiny_two_layer_config())
    needs = plan.needs("paper1_two_layer", "quick")
    assert [c["skip"] for c in needs.params["curves"]] == [0.0, 10.0]
    markers = needs.params["amp"]
    assert [(r["skip"], r["alpha"], r["d"], r["seed"]) for r in markers] == [
        (0.0, 0.3, 12, 0), (0.0, 0.3, 12, 1), (10.0, 0.3, 12, 0), (10.0, 0.3, 12, 1)]
    assert needs.inputs["amp"][0] == "results/quick/amp/two_layer_rho0.5_c0_d12/alpha0.3_seed0.npz"
    assert "paper1_two_layer" in plan.figures() and "paper1_two_layer" in plan.claim_topics("quick")


def test_the_run_params_are_the_sciences_spec_and_the_configs_stopping_rule():
    plan = _plan(tiny_two_layer_config())
    [trend] = [r for r in plan.two_layer_amp_trend_runs("quick") if r["d"] == 16 and r["seed"] == 1]
    run: TwoLayerRunJob = plan._planned_jobs("quick")[trend["path"]].params
    assert run.data == TwoLayerSpec(rho=0.5, d=16, alpha=0.3, skip=10.0, replicate=1, n_test=10)
    assert run.data.n == round(0.3 * 16 ** 2)
    assert run.stopping == {"max_iter": 30, "stationary_window": 5, "window": 4, "patience": 2}
    [gd] = [r for r in plan.two_layer_gd_runs("quick") if r["seed"] == 0]
    assert gd["path"] == "results/quick/gd/two_layer_rho0.5_c10_d12_inits3/alpha0.3_steps20_seed0.npz"
    gd_job = plan._planned_jobs("quick")[gd["path"]]
    assert gd_job.params.stopping == {"lr": 0.1, "init_scale": 1.0, "steps": 20}
    claims = plan.needs("claims_paper1_two_layer", "quick").params
    assert claims["trend_table"]["skip"] == 10.0 and len(claims["trend"]) == 4 and len(claims["gd"]) == 2


def test_the_cost_grows_with_the_sizes_the_config_names():
    plan = _plan(tiny_two_layer_config())
    jobs = {job.kind.name: job for job in plan.jobs("quick") if job.kind.name.startswith("two_layer")}
    assert set(jobs) == {"two_layer_table", "two_layer_se_curve", "two_layer_amp_run", "two_layer_gd_run"}
    for name, size, larger in (("two_layer_table", "nodes", 9), ("two_layer_amp_run", "d", 60),
                               ("two_layer_gd_run", "steps", 200)):
        job = jobs[name]
        small, big = job_cost(job), job_cost(job.with_values(**{size: larger}))
        assert big.cpu_seconds > small.cpu_seconds > 0, name
    amp = jobs["two_layer_amp_run"]
    assert job_cost(amp.with_values(max_iter=10 ** 6)).memory_bytes > job_cost(amp).memory_bytes


def test_the_repositorys_presets_plan_the_trend_and_gd_at_the_referee_scale_only_beyond_quick():
    config = repository_config()
    quick, referee = _plan(config, "quick"), _plan(config, "referee")
    assert quick.two_layer_amp_trend_runs("quick") == [] and quick.two_layer_gd_runs("quick") == []
    assert len(quick.two_layer_amp_markers("quick")) == 3 * 2 * 2
    trend = referee.two_layer_amp_trend_runs("referee")
    assert sorted({r["d"] for r in trend}) == [60, 100, 150] and len(trend) == 30
    assert len(referee.two_layer_gd_runs("referee")) == 3 * 2 * 2
    assert [t["skip"] for t in referee.two_layer_tables("referee")] == [0.0, 1.0, 10.0, 30.0]


def test_without_the_section_nothing_is_planned_and_the_topic_says_why():
    plan = _plan(tiny_theory_config())
    assert plan.two_layer_tables("quick") == [] and "paper1_two_layer" not in plan.figures()
    assert plan.unmeasured_topics("quick")["paper1_two_layer"] == "no paper1.two_layer in the config"


@pytest.mark.parametrize(("key", "value", "says"), [
    ("paper1.two_layer.figure_skips", [0, 3], "paper1.two_layer.figure_skips[1] = 3; allowed: one of "
                                                "paper1.two_layer.skips"),
    ("paper1.two_layer.amp.trend.skip", 3, "paper1.two_layer.amp.trend.skip = 3; allowed: one of"),
    ("scales.quick.two_layer.table.log2_samples", 40, "scales.quick.two_layer.table.log2_samples = 40"),
    ("scales.quick.two_layer.amp.d", 10 ** 7, "scales.quick.two_layer.amp.d = 10000000: "),
])
def test_a_bad_two_layer_value_is_refused_in_one_line_naming_its_key(key, value, says):
    config = set_key(tiny_two_layer_config(), key, value)
    with pytest.raises(ConfigError) as caught:
        validated(config)
    message = str(caught.value)
    assert message.startswith("invalid config: " + says) and "\n" not in message, message


def test_a_scale_without_its_sizes_is_refused():
    config = tiny_two_layer_config()
    del config["scales"]["paper"]["two_layer"]
    with pytest.raises(ConfigError, match=r"^invalid config: scales.paper.two_layer is missing"):
        validated(copy.deepcopy(config))
