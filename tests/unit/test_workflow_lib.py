"""The plain-Python side of the workflow (workflow/lib/aimrepro_workflow), without Snakemake."""

from __future__ import annotations

import copy
import math
import re

import pytest
import yaml

from conftest import (REPO,  # conftest also puts workflow/lib on sys.path
                      repository_config, tiny_paper1_config, tiny_paper2_config, validated)

from aimrepro.config import ConfigError, validate_config
from aimrepro.paper1.channels import CHANNELS
from aimrepro_workflow import paths
from aimrepro_workflow.checks import check_config
from aimrepro_workflow.kinds import KINDS
from aimrepro_workflow.kinds.outputs import CLAIM_FRAGMENT, FIGURES, TOPICS
from aimrepro_workflow.kinds.paper2 import ENSEMBLE_FLOWS, POLYNOMIAL_LINKS
from aimrepro_workflow.plans import Plan, strided_indices

SPECS = {**{kind.name: kind.path for kind in KINDS.results()}, "claim_fragment": CLAIM_FRAGMENT}


@pytest.fixture(scope="module")
def config() -> dict:
    loaded = yaml.safe_load((REPO / "config.yaml").read_text())
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return validate_config(loaded, schema)


def test_every_rule_is_one_registered_kind():
    assert set(KINDS) == {
        "se_curve", "se_generalisation", "aim_dataset", "amp_run", "amp_summary", "gd_run", "gd_summary",
        "sgd_run", "reference_flow", "theorem1", "landscape", "moment_truncations", "riccati_flow",
        "truncation_error", "untied_sgd_run", "untied_theory", "untied_fast_states", "fisher_table",
        "tokens_se_curve", "tokens_amp_run", "flow_ensemble", "tied_velocity", "truncation_radius",
        "untied_velocity", "untied_truncation", "untied_decay", "two_layer_table", "two_layer_se_curve",
        "two_layer_amp_run", "two_layer_gd_run",
        "token_law_amp", "token_law_gd", "token_law_theory", "token_law_se_curve", "token_law_sgd",
        *FIGURES, *(f"claims_{topic}" for topic in TOPICS), "claims"}
    assert KINDS.of_rule("aim_dataset_paper") is KINDS["aim_dataset"]
    with pytest.raises(ValueError, match="rule 'all' is not a registered kind"):
        KINDS.of_rule("all")


def test_the_paper2_theory_tables_have_readable_paths_that_parse_back():
    ensemble = KINDS["flow_ensemble"].path.format("quick", flow="exact", link="h3", T=1, rho=0.5,
                                          normalisation="unit_variance", d=100, wd=0, horizon=3,
                                          records=121, seed=0, n=3)
    assert ensemble == ("results/quick/theory/ensembles/exact_h3_T1_rho0.5_unit_variance_d100/"
                        "wd0_t3_n121_seed0x3.csv")
    assert KINDS["flow_ensemble"].path.parse(ensemble)["flow"] == "exact"
    with pytest.raises(ValueError, match="does not match its own pattern"):
        KINDS["flow_ensemble"].path.format("quick", flow="gaussian", link="h3", T=1, rho=0.5,
                                   normalisation="unit_variance", d=100, wd=0, horizon=3,
                                   records=121, seed=0, n=3)
    velocity = KINDS["tied_velocity"].path.format("paper", link="h2", T=1, rho=0.5,
                                          normalisation="unit_variance", dims=[200, 400, 1600],
                                          seed=0, n=10)
    assert velocity == ("results/paper/theory/tied_velocity/h2_T1_rho0.5_unit_variance/"
                        "d200-400-1600_seed0x10.csv")
    assert KINDS["tied_velocity"].path.parse(velocity)["dims"] == "200-400-1600"
    untied = KINDS["untied_velocity"].path.format("quick", link="h2", T=1, rho=1, normalisation="unit_variance",
                                          sU=1, sV=0.9, m2=-2, dims=[100, 200], seed=0, n=5)
    assert untied == ("results/quick/untied/velocity/h2_T1_rho1_unit_variance_sU1_sV0.9_m2-2/"
                      "d100-200_seed0x5.csv")
    decay = KINDS["untied_decay"].path.format("quick", link="h1", T=1, rho=1, normalisation="unit_variance",
                                      sU=1, sV=0.9, m2=0, d=50, start=2, horizon=6, records=61,
                                      seed=0, n=3)
    assert decay == ("results/quick/untied/decay/h1_T1_rho1_unit_variance_sU1_sV0.9_m20_d50/"
                     "tau2to6_n61_seed0x3.csv")
    assert KINDS["untied_decay"].path.parse(decay)["start"] == "2"
    radius = KINDS["truncation_radius"].path.format("quick", rho=0.5, normalisation="aim", c=1, s=1, d=200, wd=0,
                                 seed=0, n=3)
    assert radius == "results/quick/moments/radius/linear_T1_rho0.5_aim_c1_scale1_d200/wd0_seed0x3.csv"
    assert KINDS["truncation_radius"].path.parse(radius)["n"] == "3"


def test_the_ensemble_flows_and_polynomial_links_are_the_packages():
    from aimrepro.paper2 import theory_tables
    assert ENSEMBLE_FLOWS == theory_tables.FLOWS
    assert POLYNOMIAL_LINKS == theory_tables.POLYNOMIAL_LINKS


def test_numbers_in_paths_are_written_with_g_format():
    assert [paths.fmt_number(x) for x in (0.5, 1.0, 1e-05, 0.3122222222, math.inf)] == [
        "0.5", "1", "1e-05", "0.312222", "inf"]


def test_a_path_parses_back_to_the_values_it_was_formatted_from():
    path = KINDS["se_curve"].path.format("quick", channel="hardmax_paper", T=2, rho=0.5, axis="alpha",
                                 spacing="log", lo=0.03, hi=10, n=24)
    assert path == "results/quick/se/hardmax_paper_T2_rho0.5/alpha_log_0.03_10_n24.csv"
    assert KINDS["se_curve"].path.parse(path) == {
        "scale": "quick", "channel": "hardmax_paper", "T": "2", "rho": "0.5", "axis": "alpha",
        "spacing": "log", "lo": "0.03", "hi": "10", "n": "24"}
    untied = KINDS["untied_theory"].path.format(
        "paper", kind="flow", link="h2", T=1, rho=1, normalisation="unit_variance", sU=1, sV=0.9,
        m2=-2, m0=None, d=100, wd=0, horizon=0.15, records=31, fh=6, nf=31, stop=0.5,
        method="_RK45-1e-06", seed=0)
    assert untied == ("results/paper/untied/flow/h2_T1_rho1_unit_variance_sU1_sV0.9_m2-2_m0none"
                      "_d100/wd0_tau0.15_n31_fast6x31_stop0.5_RK45-1e-06_seed0.csv")
    assert KINDS["untied_theory"].path.parse(untied)["m2"] == "-2"


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
    channel = re.compile(KINDS["se_curve"].path.constraints()["channel"])
    assert all(channel.fullmatch(name) for name in CHANNELS)
    assert not channel.fullmatch("hardmax_published")
    with pytest.raises(ValueError, match="does not match its own pattern"):
        KINDS["se_curve"].path.format("quick", channel="argmax", T=2, rho=0.5, axis="alpha",
                              spacing="log", lo=0.03, hi=10, n=24)
    with pytest.raises(ValueError, match="is not a se result path"):
        KINDS["se_curve"].path.parse("results/quick/se/hardmax_T2_rho0.5/alpha_cubic_0.03_10_n24.csv")


def test_fixed_fields_give_a_rule_its_own_outputs():
    assert CLAIM_FRAGMENT.outputs(topic="paper1_amp") == {
        "table": "results/{scale}/claims/paper1_amp.tsv",
        "sidecar": "results/{scale}/claims/paper1_amp.json"}
    assert KINDS["aim_dataset"].path.log(scale="paper").startswith("results/paper/logs/data/{link}_T{T}")
    with pytest.raises(ValueError, match="unknown fields"):
        CLAIM_FRAGMENT.outputs(chapter="x")


def test_strided_indices_always_keep_the_last():
    assert strided_indices(4, 25, 6) == [7, 13, 19, 25]
    assert strided_indices(0, 3, 1) == [0, 1, 2, 3]


def test_plan_of_the_quick_config(config):
    plan = Plan(config)
    assert plan.figures() == ["paper1_fig1", "paper1_fig2", "paper1_figS1", "paper1_figS2", "paper1_two_layer",
                              "paper2_fig2", "paper2_figS1",
                              "paper2_figS2", "paper2_figS3", "paper2_fig1", "paper2_fig4",
                              "paper2_figS6", "paper2_fig3", "paper2_figS4", "paper2_figS5",
                              "paper1_token_laws", "paper2_token_laws"]
    assert plan.claim_topics("quick") == ["paper1_theory", "paper1_amp", "paper1_gd",
                                          "paper1_hardmax_tokens", "paper1_two_layer", "paper2_dynamics", "paper2_moments", "paper2_untied",
                                          "paper1_token_laws", "paper2_token_laws"]
    figure1 = config["paper1"]["figure1"]
    curves = plan.figure1_curves("quick")
    assert len(curves) == len(figure1["channels"]) * (
        len(figure1["left"]["rhos"]) + len(figure1["right"]["rhos"]) + 1)
    amp = plan.figure1_amp_curves("quick")
    size = config["scales"]["quick"]["amp"]["hardmax"]
    for curve in amp:
        assert len(curve["runs"]) == len(curve["alphas"])
        assert all(len(per_alpha) == size["seeds"] for per_alpha in curve["runs"])
        assert KINDS["amp_summary"].path.parse(curve["path"])["d"] == str(size["d"])
    # Figure S3's scan of the links it does not draw: the same d, seeds and learning-rate rule
    s3, follow = plan.figureS3_runs("quick"), plan.figureS3_follow_runs("quick")
    follow_links = config["paper2"]["figureS3"]["follow_links"]
    assert {(r["param"], r["link"]) for r in follow} == {
        (param, link) for param, links in follow_links.items() for link in links}
    assert not {r["link"] for r in follow} & {r["link"] for r in s3}
    for param in ("tied", "direct"):
        lrs = {(r["d"], r["lr"]) for r in s3 if r["param"] == param}
        assert {(r["d"], r["lr"]) for r in follow if r["param"] == param} <= lrs
    no_follow = copy.deepcopy(config)
    del no_follow["paper2"]["figureS3"]["follow_links"]
    assert Plan(no_follow).figureS3_follow_runs("quick") == []
    # the runs of Figure 2 of paper 2 use the default loss prefactor 1/2
    assert all("_c0.5_" in run["path"] for run in plan.figure2_runs("quick"))
    assert all("_c1_" in run["path"] for run in plan.figure4_moment_runs("quick"))
    targets = plan.all_targets("quick")
    assert targets[-1] == "results/quick/claims.md" and len(targets) == 3 * 17 + 1
    # Figure S2 draws the generalisation curves and the AMP points of the same channel, T and rho
    gen = plan.figureS2_gen_curves("quick")
    assert [(c["channel"], c["T"]) for c in gen] == [("softmax", 2), ("softmax", 3), ("hardmax", 2)]
    assert all(KINDS["se_generalisation"].path.parse(c["path"])["rho"] == "0.5" for c in gen)
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
            values = KINDS["amp_run"].path.parse(point["runs"][0])
            assert values["d"] == str(point["d"]) and float(values["alpha"]) == trend["alpha"]
    # a trend point on a figure's grid shares the figure's runs at the same d and seed
    figure_runs = {run for curve in plan.amp_curves("quick") for per_alpha in curve["runs"]
                   for run in per_alpha}
    assert figure_runs & set(plan.trend_runs("quick", "amp"))
    gd = plan.gd_trend("quick")
    assert [p["d"] for p in gd["points"]] == sizes["gd"]["dims"]
    assert all(KINDS["gd_run"].path.parse(run)["inits"] == str(sizes["gd"]["inits"])
               for point in gd["points"] for run in point["runs"])
    assert len(plan.trend_runs("quick", "gd")) == len(sizes["gd"]["dims"]) * sizes["gd"]["seeds"]


def test_trend_seeds_per_d_and_the_gd_control_variate_runs(config):
    plan = Plan(config)
    assert plan.trend_runs("quick", "gd_amp") == []  # no amp_seeds at the quick scale
    varied = copy.deepcopy(config)
    varied["scales"]["referee"]["trends"]["gd"] = {"dims": [50, 100], "seeds": [4, 3], "inits": 8,
                                                   "amp_seeds": [10, 2]}
    varied["scales"]["referee"]["trends"]["amp"]["softmax_T3"] = {"dims": [50, 100], "seeds": [5, 7]}
    plan = Plan(varied)
    gd = plan.gd_trend("referee")
    assert [(p["d"], len(p["runs"])) for p in gd["points"]] == [(50, 4), (100, 3)]
    # AMP on the GD datasets: at least the GD draws, so that every GD draw has its pair
    assert [(p["d"], p["amp_seeds"]) for p in gd["points"]] == [(50, list(range(10))), (100, [0, 1, 2])]
    for point in gd["points"]:
        gd_data = {plan.job_of("gd_run", KINDS["gd_run"].path.parse(run)).inputs()["data"]
                   for run in point["runs"]}
        amp_data = {plan.job_of("amp_run", KINDS["amp_run"].path.parse(run)).inputs()["data"]
                    for run in point["amp_runs"]}
        assert gd_data <= amp_data
    assert len(plan.trend_runs("referee", "gd_amp")) == 13
    softmax = next(t for t in plan.amp_trends("referee") if t["name"] == "softmax_T3")
    assert [len(p["runs"]) for p in softmax["points"]] == [5, 7]
    with pytest.raises(ValueError, match="kind"):
        plan.trend_runs("referee", "sgd")


def test_the_referee_scale_sizes_the_trends_beyond_the_quick_one(config):
    plan = Plan(config)
    assert plan.figures() and plan.all_targets("referee")[-1] == "results/referee/claims.md"
    quick, referee = plan.amp_trends("quick"), plan.amp_trends("referee")
    assert all(t["points"] for t in referee)  # every AMP trend is measured: nothing "not measured"
    assert sum(len(p["runs"]) for t in referee for p in t["points"]) > \
        sum(len(p["runs"]) for t in quick for p in t["points"])
    assert plan.tokens_amp_runs("referee") and not plan.tokens_amp_runs("quick")
    assert plan.trend_runs("referee", "gd_amp")
    assert "paper1_hardmax_tokens_amp" in plan.claim_topics("referee")


def test_min_width_leaves_out_the_rhos_below_the_extensive_rank_regime(config):
    size = config["scales"]["quick"]["amp"]["hardmax"]
    rhos = {c["rho"] for c in Plan(config).figure1_amp_curves("quick")}
    assert rhos and all(rho * size["d"] >= size["min_width"] for rho in rhos)
    wider = copy.deepcopy(config)
    wider["scales"]["quick"]["amp"]["hardmax"]["min_width"] = 0
    assert {c["rho"] for c in Plan(wider).figure1_amp_curves("quick")} > rhos


def test_plan_of_the_paper_scale(config):
    plan = Plan(config)
    figure2 = config["paper1"]["figure2"]
    curves = plan.figure2_curves("paper")
    assert len(curves) == len(figure2["left"]["rhos"]) + 2  # rho = infinity, right panel
    # the papers' resolution: 128 points per finite-rho hardmax curve, 256 per softmax one
    assert "results/paper/se/hardmax_T2_rho0.5/alpha_log_0.03_10_n128.csv" in [
        curve["path"] for curve in plan.figure1_curves("paper")]
    assert all(curve["path"].endswith("_n256.csv") for curve in curves)
    # paper 2 at the paper's settings (docs/paper2.md §6): Figure 2 d = 400, lr 0.005, batch 512;
    # Figures 1 and 4 d = 400, lr 0.01, batch 512; Figure 3 d = 800, lr 0.01, batch 4096
    assert ("results/paper/sgd/tied_h3_T1_rho0.5_unit_variance_c0.5_d400/"
            "lr0.005_B512_wd0_t3_n241_stopnone_seed4.csv") in [
        run["path"] for run in plan.figure2_runs("paper")]
    assert ("results/paper/sgd/tied_softmax_T2_rho0.5_aim_c0.5_d400/"
            "lr0.01_B512_wd0_t2_n81_stopnone_seed0.csv") in [
        run["path"] for run in plan.figure1_moment_runs("paper")]
    assert ("results/paper/sgd/tied_linear_T1_rho0.5_aim_c1_d400/"
            "lr0.01_B512_wd0_t0.1_n81_stopnone_seed2.csv") in [
        run["path"] for run in plan.figure4_moment_runs("paper")]
    assert ("results/paper/untied/sgd/h3_T1_rho1_unit_variance_sU1_sV0.9_m20_m0none_d800/"
            "lr0.01_B4096_wd0_tau1.5_n151_fast0x0_stopnone_seed2.csv") in [
        run["path"] for run in plan.figure3_untied_runs("paper")]
    targets = plan.all_targets("paper")
    assert targets[-1] == "results/paper/claims.md" and len(targets) == 3 * 17 + 1
    assert all(target.startswith(("results/paper/", "figures/paper/")) for target in targets)


def test_a_scale_without_simulation_sizes_measures_no_simulation_claims(config):
    reduced = copy.deepcopy(config)
    del reduced["scales"]["quick"]["amp"], reduced["scales"]["quick"]["gd"], reduced["scales"]["quick"]["token_laws"]
    del reduced["paper2"]
    plan = Plan(reduced)
    assert plan.claim_topics("quick") == ["paper1_theory", "paper1_hardmax_tokens", "paper1_two_layer"]
    # the token-law figure draws its theory lines without runs
    assert plan.figures() == ["paper1_fig1", "paper1_fig2", "paper1_figS1", "paper1_figS2", "paper1_two_layer", "paper1_token_laws"]
    assert set(plan.unmeasured_topics("quick")) == {
        "paper1_amp", "paper1_gd", "paper1_hardmax_tokens_amp", "paper2_dynamics", "paper2_moments", "paper2_untied",
        "paper1_token_laws", "paper2_token_laws"}


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


def _pop(path):
    def edit(config):
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node[key]
        del node[last]
    return edit


def _amp_first_rho(config):
    config["paper1"]["figure1"]["amp"]["first_index"][0]["rho"] = 0.3


def _gd_inits(config):
    config["scales"]["quick"]["gd"]["inits"] = 0


def _low_stop_overlap(config):
    config["paper2"]["figureS3"]["stop_overlap"] = 0.2


@pytest.mark.parametrize("config, edit, message", [
    (tiny_paper1_config, _amp_first_rho,
     "paper1.figure1.amp.first_index[0].rho = 0.3; allowed: one of left.rhos [0.5]"),
    (tiny_paper1_config, _gd_inits, "scales.quick.gd.inits = 0; allowed: "),
    (tiny_paper2_config, _low_stop_overlap,
     "paper2.figureS3.stop_overlap = 0.2; allowed: a number >= paper2.threshold (0.3)"),
    (lambda: tiny_paper2_config("untied"), _pop("paper2.figureS4"),
     "paper2.figureS4 is missing; allowed: a mapping (the untied figures need paper2.figure3, "
     "figureS4, figureS5 together)"),
    (lambda: tiny_paper2_config("moments"), _pop("scales.quick.paper2.figure4"),
     "scales.quick.paper2.figure4 is missing; allowed: the sizes of paper2.figure4 at scale quick "
     "(see config.yaml)"),
], ids=["amp-first-rho", "gd-inits", "stop-overlap", "untied-sections", "moment-preset"])
def test_the_tiny_configs_are_checked_as_the_snakefile_checks_them(config, edit, message):
    """The messages Snakemake prints for these configs (the Snakefile runs ``validated``)."""
    good = config()
    validated(copy.deepcopy(good))
    edit(good)
    with pytest.raises(ConfigError) as caught:
        validated(good)
    assert str(caught.value).startswith("invalid config: " + message)
    assert "\n" not in str(caught.value)
    if not message.endswith("allowed: "):
        assert str(caught.value) == "invalid config: " + message


def test_hardmax_tokens_plan_ties_each_curve_to_its_table(config):
    plan = Plan(config)
    size = config["scales"]["quick"]["hardmax_tokens"]
    tables = plan.fisher_tables("quick")
    assert [t["T"] for t in tables] == size["Ts"]
    assert tables[0]["path"] == (f"results/quick/fisher/hardmax_T{size['Ts'][0]}_x0.02_k17_"
                                 f"nref{size['n_reference']}_deg6_seed{config['seed']}.csv")
    curves = plan.tokens_curves("quick")
    assert len(curves) == len(tables) * len(config["paper1"]["figure1"]["left"]["rhos"])
    for curve in curves:
        values = KINDS["tokens_se_curve"].path.parse(curve["path"])
        # the rule finds the table from the curve's wildcards alone
        assert plan.fisher_table("quick", int(values["T"]), int(values["nref"]),
                                 int(values["seed"]))["path"] == curve["table"]
        # never matched by the rule of the exact channels
        with pytest.raises(ValueError):
            KINDS["se_curve"].path.parse(curve["path"])
    exact = plan.tokens_exact_curves("quick")
    assert {c["path"] for c in exact} <= {c["path"] for c in plan.figure1_curves("quick")}


def test_hardmax_tokens_sizes_are_required_at_every_scale(config):
    broken = copy.deepcopy(config)
    del broken["scales"]["paper"]["hardmax_tokens"]
    with pytest.raises(ConfigError, match="scales.paper.hardmax_tokens is missing"):
        check_config(broken)
    del broken["paper1"]["hardmax_tokens"]
    check_config(broken)  # without the section nothing is planned and no size is needed
    assert "paper1_figS1" not in Plan(broken).figures()
    assert "paper1_hardmax_tokens" in Plan(broken).unmeasured_topics("quick")
    broken = copy.deepcopy(config)
    broken["paper1"]["hardmax_tokens"]["table"]["degree"] = 17
    with pytest.raises(ConfigError, match="table.degree = 17; allowed: an integer < table.nodes = 17"):
        check_config(broken)


def test_hardmax_tokens_amp_is_planned_where_sized(config):
    plan = Plan(config)
    assert plan.tokens_amp_runs("quick") == []
    assert "paper1_hardmax_tokens_amp" in plan.unmeasured_topics("quick")
    assert "paper1_hardmax_tokens_amp" not in plan.unmeasured_topics("paper")
    assert "paper1_hardmax_tokens_amp" in plan.claim_topics("paper")
    runs = plan.tokens_amp_runs("paper")
    size = config["scales"]["paper"]["hardmax_tokens"]["amp"]
    assert len(runs) == len(size["dims"]) * size["seeds"]
    first = runs[0]
    assert KINDS["tokens_amp_run"].path.parse(first["path"])["proposals"] == "256"
    assert KINDS["aim_dataset"].path.parse(first["data"])["link"] == "hardmax"
    assert plan.tokens_amp_table("paper")["T"] == config["paper1"]["hardmax_tokens"]["amp"]["T"]
    broken = copy.deepcopy(config)
    broken["scales"]["paper"]["hardmax_tokens"]["Ts"] = [2, 4]
    with pytest.raises(ConfigError, match="hardmax_tokens.amp.T = 3; allowed: one of scales.paper"):
        check_config(broken)


def test_the_untied_truncation_replicates_also_run_sgd_over_its_window(config):
    plan = Plan(config)
    [table] = plan.untied_truncation_tables("quick")
    runs = plan.untied_truncation_sgd_runs("quick")
    assert runs == table["sgd_runs"] and [r["seed"] for r in runs] == table["seeds"]
    sizes = config["scales"]["quick"]["paper2"]["untied_truncation"]
    for run in runs:
        fields = KINDS["untied_sgd_run"].path.parse(run["path"])
        # the table's problem (same U(0), V(0), teacher) on its window and slow-time grid
        assert (fields["link"], float(fields["m2"]), int(fields["d"])) == (
            table["link"], table["teacher_mean"], table["d"])
        assert (float(fields["horizon"]), int(fields["records"])) == (table["horizon"],
                                                                      sizes["records"])
        assert (fields["m0"], fields["stop"], float(fields["lr"])) == ("none", "none", sizes["lr"])
    reduced = copy.deepcopy(config)
    del reduced["scales"]["quick"]["paper2"]["untied_truncation"]["lr"]
    del reduced["scales"]["quick"]["paper2"]["untied_truncation"]["batch"]
    assert Plan(reduced).untied_truncation_sgd_runs("quick") == []


def test_the_untied_decay_replicates_run_sgd_on_their_grid_at_each_step_size(config):
    plan = Plan(config)
    [table] = plan.untied_decay_tables("quick")
    sizes = config["scales"]["quick"]["paper2"]["untied_strong_recovery"]
    fields = KINDS["untied_decay"].path.parse(table["path"])
    assert (int(fields["d"]), int(fields["n"]), float(fields["start"])) == (
        sizes["d"], sizes["seeds"], table["window_start"])
    runs = plan.untied_decay_sgd_runs("quick")
    assert runs == table["sgd_runs"]
    assert len(runs) == len(sizes["sgd"]["lrs"]) * sizes["sgd"]["seeds"]
    assert {r["seed"] for r in runs} <= set(table["seeds"])
    for run in runs:
        sgd = KINDS["untied_sgd_run"].path.parse(run["path"])
        assert (float(sgd["horizon"]), int(sgd["records"]), int(sgd["d"])) == (
            table["horizon"], sizes["records"], sizes["d"])
        assert (sgd["m0"], sgd["stop"], sgd["nf"]) == ("none", "none", "0")
    reduced = copy.deepcopy(config)
    del reduced["scales"]["quick"]["paper2"]["untied_strong_recovery"]["sgd"]
    assert Plan(reduced).untied_decay_sgd_runs("quick") == []
    del reduced["paper2"]["untied_strong_recovery"]
    assert Plan(reduced).untied_decay_tables("quick") == []
    # the window starts inside the horizon; SGD only from replicates that have flows
    broken = copy.deepcopy(config)
    broken["paper2"]["untied_strong_recovery"]["cases"][0]["window_start"] = 7.0
    with pytest.raises(ConfigError, match=r"cases\[0\].window_start = 7.0; allowed: a number <"):
        check_config(broken)
    broken = copy.deepcopy(config)
    broken["scales"]["paper"]["paper2"]["untied_strong_recovery"]["sgd"]["seeds"] = 5
    with pytest.raises(ConfigError, match="untied_strong_recovery.sgd.seeds = 5; allowed"):
        check_config(broken)


def test_the_untied_velocity_trend_needs_two_sizes(config):
    # one d would leave the eq. 42 row without a trend to judge (it is not written then)
    one_size = copy.deepcopy(config)
    one_size["scales"]["quick"]["paper2"]["untied_velocity"]["dims"] = [100]
    with pytest.raises(ConfigError, match=r"untied_velocity.dims"):
        validated(one_size)


def test_strong_recovery_sgd_runs_share_the_flows_replicates_at_two_step_sizes(config):
    plan = Plan(config)
    runs = plan.strong_recovery_sgd_runs("quick")
    sizes = config["scales"]["quick"]["paper2"]["strong_recovery"]
    science = config["paper2"]["strong_recovery"]["sgd"]
    assert sorted({r["lr"] for r in runs}) == sorted(sizes["sgd"]["lrs"])
    assert len(runs) == len(sizes["sgd"]["lrs"]) * sizes["sgd"]["seeds"]
    [ensemble] = [e for e in plan.strong_recovery_ensembles("quick")
                  if (e["flow"], e["link"]) == (science["param"], science["link"])]
    for run in runs:
        fields = KINDS["sgd_run"].path.parse(run["path"])
        assert (fields["param"], fields["link"], int(fields["d"])) == (
            science["param"], science["link"], ensemble["d"])
        assert run["seed"] in ensemble["seeds"] and fields["stop"] == "none"
        assert float(fields["horizon"]) == science["horizon"]
    reduced = copy.deepcopy(config)
    del reduced["scales"]["quick"]["paper2"]["strong_recovery"]["sgd"]
    assert Plan(reduced).strong_recovery_sgd_runs("quick") == []


def test_figure_s3_replicates_may_differ_per_parametrisation(config):
    varied = copy.deepcopy(config)
    varied["scales"]["referee"]["paper2"]["figureS3"]["seeds"] = {"tied": 3, "direct": 5}
    runs = Plan(varied).figureS3_runs("referee") + Plan(varied).figureS3_follow_runs("referee")
    for param, count in (("tied", 3), ("direct", 5)):
        for d in config["scales"]["referee"]["paper2"]["figureS3"]["dims"][param]:
            per_link = {run["link"] for run in runs if run["param"] == param}
            assert sum(run["param"] == param and run["d"] == d for run in runs) == count * len(per_link)


@pytest.mark.parametrize("section, allowed", [
    ("hardmax_tokens", "a mapping {Ts, n_reference} (the Fisher tables of paper1.hardmax_tokens at this scale)"),
    ("two_layer", "a mapping {se_points, table, threshold, amp} (the sizes of paper1.two_layer at this scale)"),
])
def test_a_scale_without_a_configured_study_s_sizes_is_refused_naming_it(section, allowed):
    config = repository_config()
    del config["scales"]["quick"][section]
    with pytest.raises(ConfigError) as caught:
        validated(config)
    assert str(caught.value) == f"invalid config: scales.quick.{section} is missing; allowed: {allowed}"
