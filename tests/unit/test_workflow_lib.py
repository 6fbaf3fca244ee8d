"""The plain-Python side of the workflow (workflow/lib/aimrepro_workflow), without Snakemake."""

from __future__ import annotations

import copy
import math
import re

import pytest
import yaml

from conftest import REPO  # conftest also puts workflow/lib on sys.path

from aimrepro.config import ConfigError, validate_config
from aimrepro.paper1.channels import CHANNELS
from aimrepro_workflow import paths
from aimrepro_workflow.checks import check_config
from aimrepro_workflow.plans import Plan, strided_indices

SPECS = {name: spec for name, spec in vars(paths).items() if isinstance(spec, paths.ResultPath)}


@pytest.fixture(scope="module")
def config() -> dict:
    loaded = yaml.safe_load((REPO / "config.yaml").read_text())
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return validate_config(loaded, schema)


def test_every_result_kind_is_one_spec():
    assert set(SPECS) == {
        "SE_CURVE", "GEN_CURVE", "DATASET", "AMP_RUN", "AMP_SUMMARY", "GD_RUN", "GD_SUMMARY", "SGD_RUN",
        "REFERENCE_FLOW", "THEOREM1", "LANDSCAPE", "TRUNCATIONS", "RICCATI", "TRUNCATION_ERROR",
        "UNTIED_SGD", "UNTIED_THEORY", "FAST_STATES", "CLAIM_FRAGMENT"}


def test_numbers_in_paths_are_written_with_g_format():
    assert [paths.fmt_number(x) for x in (0.5, 1.0, 1e-05, 0.3122222222, math.inf)] == [
        "0.5", "1", "1e-05", "0.312222", "inf"]


def test_a_path_parses_back_to_the_values_it_was_formatted_from():
    path = paths.SE_CURVE.format("quick", channel="hardmax_paper", T=2, rho=0.5, axis="alpha",
                                 spacing="log", lo=0.03, hi=10, n=24)
    assert path == "results/quick/se/hardmax_paper_T2_rho0.5/alpha_log_0.03_10_n24.csv"
    assert paths.SE_CURVE.parse(path) == {
        "scale": "quick", "channel": "hardmax_paper", "T": "2", "rho": "0.5", "axis": "alpha",
        "spacing": "log", "lo": "0.03", "hi": "10", "n": "24"}
    untied = paths.UNTIED_THEORY.format(
        "paper", kind="flow", link="h2", T=1, rho=1, normalisation="unit_variance", sU=1, sV=0.9,
        m2=-2, m0=None, d=100, wd=0, horizon=0.15, records=31, fh=6, nf=31, stop=0.5,
        method="_RK45-1e-06", seed=0)
    assert untied == ("results/paper/untied/flow/h2_T1_rho1_unit_variance_sU1_sV0.9_m2-2_m0none"
                      "_d100/wd0_tau0.15_n31_fast6x31_stop0.5_RK45-1e-06_seed0.csv")
    assert paths.UNTIED_THEORY.parse(untied)["m2"] == "-2"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_pattern_sidecar_log_and_constraints_agree(name):
    spec = SPECS[name]
    outputs = spec.outputs()
    assert outputs[spec.output].endswith(spec.suffix)
    assert outputs["sidecar"] == outputs[spec.output][: -len(spec.suffix)] + ".json"
    assert spec.log().startswith("results/{scale}/logs/") and spec.log().endswith(".log")
    wildcards = set(re.findall(r"{(\w+)}", outputs[spec.output])) - {"scale"}
    assert wildcards == set(spec.constraints())
    for regex in spec.constraints().values():
        re.compile(regex)


def test_constraints_come_from_the_package_registries():
    channel = re.compile(paths.SE_CURVE.constraints()["channel"])
    assert all(channel.fullmatch(name) for name in CHANNELS)
    assert not channel.fullmatch("hardmax_published")
    with pytest.raises(ValueError, match="does not match its own pattern"):
        paths.SE_CURVE.format("quick", channel="argmax", T=2, rho=0.5, axis="alpha",
                              spacing="log", lo=0.03, hi=10, n=24)
    with pytest.raises(ValueError, match="is not a se result path"):
        paths.SE_CURVE.parse("results/quick/se/hardmax_T2_rho0.5/alpha_cubic_0.03_10_n24.csv")


def test_fixed_fields_give_a_rule_its_own_outputs():
    assert paths.CLAIM_FRAGMENT.outputs(topic="paper1_amp") == {
        "table": "results/{scale}/claims/paper1_amp.tsv",
        "sidecar": "results/{scale}/claims/paper1_amp.json"}
    assert paths.DATASET.log(scale="paper").startswith("results/paper/logs/data/{link}_T{T}")
    with pytest.raises(ValueError, match="unknown fields"):
        paths.CLAIM_FRAGMENT.outputs(chapter="x")


def test_strided_indices_always_keep_the_last():
    assert strided_indices(4, 25, 6) == [7, 13, 19, 25]
    assert strided_indices(0, 3, 1) == [0, 1, 2, 3]


def test_plan_of_the_quick_config(config):
    plan = Plan(config)
    assert plan.figures() == ["paper1_fig1", "paper1_fig2", "paper1_figS2", "paper2_fig2", "paper2_figS1",
                              "paper2_figS2", "paper2_figS3", "paper2_fig1", "paper2_fig4",
                              "paper2_figS6", "paper2_fig3", "paper2_figS4", "paper2_figS5"]
    assert plan.claim_topics("quick") == ["paper1_theory", "paper1_amp", "paper1_gd",
                                          "paper2_dynamics", "paper2_moments", "paper2_untied"]
    figure1 = config["paper1"]["figure1"]
    curves = plan.figure1_curves("quick")
    assert len(curves) == len(figure1["channels"]) * (
        len(figure1["left"]["rhos"]) + len(figure1["right"]["rhos"]) + 1)
    amp = plan.figure1_amp_curves("quick")
    size = config["scales"]["quick"]["amp"]["hardmax"]
    for curve in amp:
        assert len(curve["runs"]) == len(curve["alphas"])
        assert all(len(per_alpha) == size["seeds"] for per_alpha in curve["runs"])
        assert paths.AMP_SUMMARY.parse(curve["path"])["d"] == str(size["d"])
    # the runs of Figure 2 of paper 2 use the default loss prefactor 1/2
    assert all("_c0.5_" in run["path"] for run in plan.figure2_runs("quick"))
    assert all("_c1_" in run["path"] for run in plan.figure4_moment_runs("quick"))
    targets = plan.all_targets("quick")
    assert targets[-1] == "results/quick/claims.md" and len(targets) == 3 * 13 + 1
    # Figure S2 draws the generalisation curves and the AMP points of the same channel, T and rho
    gen = plan.figureS2_gen_curves("quick")
    assert [(c["channel"], c["T"]) for c in gen] == [("softmax", 2), ("softmax", 3), ("hardmax", 2)]
    assert all(paths.GEN_CURVE.parse(c["path"])["rho"] == "0.5" for c in gen)
    assert {(c["channel"], c["T"], c["rho"]) for c in plan.figureS2_amp_curves("quick")} == {
        ("softmax", 2, 0.5), ("softmax", 3, 0.5), ("hardmax", 2, 0.5)}


def test_trends_plan_their_runs_per_d_and_say_which_are_not_measured(config):
    plan = Plan(config)
    sizes = config["scales"]["quick"]["trends"]
    trends = {t["name"]: t for t in plan.amp_trends("quick")}
    assert set(trends) == {spec["name"] for spec in config["paper1"]["trends"]["amp"]}
    for name, trend in trends.items():
        if name not in sizes["amp"]:
            assert trend["points"] == []  # its claims row says "not measured at this scale"
            continue
        assert [p["d"] for p in trend["points"]] == sizes["amp"][name]["dims"]
        for point in trend["points"]:
            assert len(point["runs"]) == sizes["amp"][name]["seeds"]
            values = paths.AMP_RUN.parse(point["runs"][0])
            assert values["d"] == str(point["d"]) and float(values["alpha"]) == trend["alpha"]
    # a trend point on a figure's grid shares the figure's runs at the same d and seed
    figure_runs = {run for curve in plan.amp_curves("quick") for per_alpha in curve["runs"]
                   for run in per_alpha}
    assert figure_runs & set(plan.trend_runs("quick", "amp"))
    gd = plan.gd_trend("quick")
    assert [p["d"] for p in gd["points"]] == sizes["gd"]["dims"]
    assert all(paths.GD_RUN.parse(run)["inits"] == str(sizes["gd"]["inits"])
               for point in gd["points"] for run in point["runs"])
    assert len(plan.trend_runs("quick", "gd")) == len(sizes["gd"]["dims"]) * sizes["gd"]["seeds"]


def test_min_width_leaves_out_the_rhos_below_the_extensive_rank_regime(config):
    size = config["scales"]["quick"]["amp"]["hardmax"]
    rhos = {c["rho"] for c in Plan(config).figure1_amp_curves("quick")}
    assert rhos and all(rho * size["d"] >= size["min_width"] for rho in rhos)
    wider = copy.deepcopy(config)
    wider["scales"]["quick"]["amp"]["hardmax"]["min_width"] = 0
    assert {c["rho"] for c in Plan(wider).figure1_amp_curves("quick")} > rhos


def test_a_scale_without_simulation_sizes_measures_no_simulation_claims(config):
    reduced = copy.deepcopy(config)
    del reduced["scales"]["quick"]["amp"], reduced["scales"]["quick"]["gd"]
    del reduced["paper2"]
    plan = Plan(reduced)
    assert plan.claim_topics("quick") == ["paper1_theory"]
    assert plan.figures() == ["paper1_fig1", "paper1_fig2", "paper1_figS2"]  # S2: SE curves without markers
    assert set(plan.unmeasured_topics("quick")) == {
        "paper1_amp", "paper1_gd", "paper2_dynamics", "paper2_moments", "paper2_untied"}


@pytest.mark.parametrize("edit, message", [
    (lambda c: c["paper1"]["figure1"]["amp"].update(last_index=99),
     "paper1.figure1.amp.last_index = 99; allowed: an index < alpha.n = 32"),
    (lambda c: c["paper1"]["figure1"]["amp"]["first_index"][0].update(rho=0.3),
     "paper1.figure1.amp.first_index[0].rho = 0.3; allowed: one of left.rhos"),
    (lambda c: c["paper2"]["figureS5"].update(stop_overlap=0.01),
     "paper2.figureS5.stop_overlap = 0.01; allowed: a number >= paper2.threshold"),
    (lambda c: c["paper2"]["figureS6"].update(t_min=1e3),
     "paper2.figureS6.t_min = 1000.0; allowed: a number < paper2.figureS6.horizon"),
    (lambda c: c["paper2"].pop("figureS4"),
     "paper2.figureS4 is missing; allowed: a mapping (the untied figures need"),
    (lambda c: c["scales"]["paper"]["paper2"].pop("figure4"),
     "scales.paper.paper2.figure4 is missing"),
    (lambda c: c["scales"]["quick"]["trends"]["amp"].update(nowhere={"dims": [50, 100], "seeds": 2}),
     "scales.quick.trends.amp.nowhere; allowed: a name of paper1.trends.amp"),
])
def test_cross_key_checks_name_the_key(config, edit, message):
    broken = copy.deepcopy(config)
    edit(broken)
    with pytest.raises(ConfigError) as caught:
        check_config(broken)
    assert str(caught.value).startswith("invalid config: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)
    check_config(config)  # the repository's config passes
