"""The token-law kinds (workflow/lib/aimrepro_workflow/kinds/token_laws.py) and their plan, without Snakemake."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from conftest import repository_config, validated  # conftest also puts workflow/lib on sys.path

from aimrepro.model import GAUSSIAN, TokenLaw
from aimrepro.paper1.token_law_runs import amp_table_from_columns, amp_table_to_columns
from aimrepro.paper2.sgd import ProblemSpec, SGDSettings
from aimrepro.paper2.token_law_runs import law_replicates, load_law_replicates, save_law_replicates
from aimrepro.records.tables import read_table, write_table
from aimrepro_workflow.kinds import KINDS
from aimrepro_workflow.plans import Plan
from aimrepro_workflow.prices import STARTUP

LAWS = ("gaussian", "rademacher", "sparse_p0.5", "student_t_nu5")


@pytest.fixture(scope="module")
def plan() -> Plan:
    return Plan(validated(repository_config()))


def test_every_law_is_in_the_path_and_reads_back():
    spec = KINDS["token_law_amp"].path
    for token in LAWS:
        path = spec.format("quick", channel="softmax_beta1", T=3, rho=0.5, d=100, alpha=0.03, law=token, n=4)
        assert path == f"results/quick/token_laws/amp/softmax_beta1_T3_rho0.5_d100/alpha0.03_{token}_seeds4.csv"
        assert spec.values(spec.parse(path))["law"] == token
        assert TokenLaw.parse(token).token == token
    with pytest.raises(ValueError, match="does not match its own pattern"):
        spec.format("quick", channel="hardmax", T=2, rho=1, d=50, alpha=0.6, law="laplace", n=4)
    sgd = KINDS["token_law_sgd"].path.format("referee", param="tied", link="h2", T=1, rho=0.5,
                                             normalisation="unit_variance", d=200, law="sparse_p0.5", lr=0.0217,
                                             B=256, horizon=8, records=81, stop=0.5, seed=0, n=3)
    assert sgd == ("results/referee/token_laws/sgd/tied_h2_T1_rho0.5_unit_variance_d200/"
                   "sparse_p0.5_lr0.0217_B256_t8_n81_stop0.5_seed0x3.npz")


def test_the_params_carry_the_law_and_the_replicates(plan):
    runs = plan.token_law_amp_runs("quick")
    # three points, four laws, two sizes each at the quick scale
    assert len(runs) == 3 * 4 * 2
    job = plan.job_of("token_law_amp", KINDS["token_law_amp"].path.parse(runs[-1]["path"]))
    assert job.params.data.tokens == TokenLaw.parse(runs[-1]["law"])
    assert job.params.replicates == tuple(range(runs[-1]["seeds"]))
    assert job.params.base_seed == plan.config["seed"]
    gd = plan.job_of("token_law_gd", KINDS["token_law_gd"].path.parse(plan.token_law_gd_runs("quick")[0]["path"]))
    assert gd.params.data.tokens == GAUSSIAN and gd.params.inits == 8
    sgd_run = plan.token_law_sgd_runs("quick")[0]
    sgd = plan.job_of("token_law_sgd", KINDS["token_law_sgd"].path.parse(sgd_run["path"]))
    assert sgd.params.problem.tokens == TokenLaw.parse(sgd_run["law"]) and sgd.params.seeds == (0, 1, 2)
    assert sgd.params.threshold == plan.config["paper2"]["threshold"]


def test_the_referee_gives_direct_s_its_own_replicate_count(plan):
    replicates = {}
    for run in plan.token_law_sgd_runs("referee"):
        job = plan.job_of("token_law_sgd", KINDS["token_law_sgd"].path.parse(run["path"]))
        replicates.setdefault(run["param"], set()).add(len(job.params.seeds))
        assert job.keys["n"] == f"scales.referee.paper2.token_laws.seeds.{run['param']}"
    seeds = plan.config["scales"]["referee"]["paper2"]["token_laws"]["seeds"]
    assert seeds["tied"] != seeds["direct"] and replicates == {p: {n} for p, n in seeds.items()}
    quick = plan.token_law_sgd_runs("quick")[0]
    assert plan.job_of("token_law_sgd", KINDS["token_law_sgd"].path.parse(quick["path"])).keys["n"] == (
        "scales.quick.paper2.token_laws.seeds")


def test_the_theory_is_planned_for_hardmax_laws_other_than_gaussian(plan):
    tables = plan.token_law_theories("quick")
    assert [(t["point"], t["law"]) for t in tables] == [("hardmax_T2", law) for law in LAWS[1:]]
    job = plan.job_of("token_law_theory", KINDS["token_law_theory"].path.parse(tables[0]["path"]))
    assert job.params.dims == (50, 75) and job.params.samples == 5_000


def test_the_gaussian_line_of_the_figure_is_figure_1_lefts_curve(plan):
    """No second job for the papers' SE: the Gaussian law's curve is the se_curve of Figure 1 left at that rho."""
    curves = {c["law"]: c["path"] for c in plan.token_law_curves("quick")}
    assert curves["gaussian"] in {c["path"] for c in plan.figure1_curves("quick")}
    assert all("/token_laws/se/" in path for law, path in curves.items() if law != "gaussian")


def test_a_jobs_work_is_its_replicates_times_one_beside_its_start_up(plan):
    for kind, runs in (("token_law_amp", plan.token_law_amp_runs("quick")),
                       ("token_law_gd", plan.token_law_gd_runs("quick")),
                       ("token_law_sgd", plan.token_law_sgd_runs("quick"))):
        job = plan.job_of(kind, KINDS[kind].path.parse(runs[0]["path"]))
        double = job.with_values(n=2 * job.values["n"])
        startup = STARTUP[kind]
        one, two = job.work.seconds(job.work.loop) - startup, double.work.seconds(double.work.loop) - startup
        assert one > 0 and two == pytest.approx(2 * one, rel=1e-12)


def test_the_quick_scale_adds_at_most_about_ninety_cpu_seconds(plan):
    """The cost model's estimate of every token-law job at the quick scale (brief: ~90 CPU-s)."""
    kinds = {"token_law_amp", "token_law_gd", "token_law_theory", "token_law_se_curve", "token_law_sgd"}
    seconds = sum(job.work.seconds(job.work.loop) for job in plan.jobs("quick") if job.kind.name in kinds)
    assert 20 < seconds < 120


def test_figures_and_topics_follow_the_config(plan):
    assert {"paper1_token_laws", "paper2_token_laws"} <= set(plan.figures())
    assert {"paper1_token_laws", "paper2_token_laws"} <= set(plan.claim_topics("quick"))
    config = copy.deepcopy(plan.config)
    del config["scales"]["quick"]["token_laws"], config["scales"]["quick"]["paper2"]["token_laws"]
    bare = Plan(config)
    assert "paper1_token_laws" not in bare.claim_topics("quick")
    assert bare.unmeasured_topics("quick")["paper2_token_laws"] == "no scales.quick.paper2.token_laws sizes"
    # the figure draws the largest d of each parametrisation
    assert {(r["param"], r["d"]) for r in plan.token_law_figure_runs("quick")} == {("tied", 100), ("direct", 50)}


def test_a_law_with_its_own_sizes_runs_them_in_place_of_the_common_ones(plan):
    sizes = plan.config["scales"]["referee"]["paper2"]["token_laws"]
    ((law, own),) = sizes["law_dims"]["tied"].items()
    runs = plan.token_law_sgd_runs("referee")
    per_law = {}
    for r in runs:
        if r["param"] == "tied":
            per_law.setdefault(r["law"], []).append(r["d"])
    assert per_law[law] == own and set(own) != set(sizes["dims"]["tied"])
    assert all(dims == sizes["dims"]["tied"] for other, dims in per_law.items() if other != law)
    job = plan.job_of("token_law_sgd", KINDS["token_law_sgd"].path.parse(
        next(r["path"] for r in runs if r["law"] == law and r["param"] == "tied")))
    assert job.keys["d"] == f"scales.referee.paper2.token_laws.law_dims.tied.{law}[0]"
    # the figure draws every law at the largest common size, or at its own size nearest it
    drawn = {(r["law"], r["d"]) for r in plan.token_law_figure_runs("referee") if r["param"] == "tied"}
    assert drawn == {(other, max(sizes["dims"]["tied"])) for other in per_law}  # 200 is among the law's own
    config = copy.deepcopy(plan.config)
    config["scales"]["referee"]["paper2"]["token_laws"]["law_dims"]["tied"][law] = [300, 400]
    drawn = {(r["law"], r["d"]) for r in Plan(config).token_law_figure_runs("referee") if r["param"] == "tied"}
    assert (law, 300) in drawn and len(drawn) == len(per_law)
    assert {r["path"] for r in runs} == set(plan.needs("claims_paper2_token_laws", "referee").inputs["runs"])


def test_an_amp_table_round_trips_through_its_csv(tmp_path):
    table = {"replicate": np.array([0, 1, 2]), "error": np.array([0.1, 0.2, 140.0]),
             "C_hat": np.array([0.1, 0.19, 0.2]), "iterations": np.array([40, 2000, 12]),
             "converged": np.array([True, False, False]),
             "status": np.array(["converged", "max_iter", "diverged"])}
    write_table(tmp_path / "t.csv", amp_table_to_columns(table))
    back = amp_table_from_columns(read_table(tmp_path / "t.csv"))
    for name, column in table.items():
        assert list(back[name]) == list(column)


def test_law_replicates_round_trip_through_their_npz(tmp_path):
    spec = ProblemSpec("tied", "h2", 1, 12, rho=0.5, tokens=TokenLaw.parse("sparse_p0.5"))
    settings = SGDSettings(lr=0.05, batch=8, horizon=0.2, n_records=5)
    summaries, trajectories = law_replicates(spec, settings, [3, 10], threshold=0.3)
    save_law_replicates(tmp_path / "r.npz", summaries, trajectories)
    back_summaries, back = load_law_replicates(tmp_path / "r.npz", 12)
    for name in summaries[0]:
        np.testing.assert_array_equal([s[name] for s in back_summaries], [s[name] for s in summaries])
        assert [type(s[name]) for s in back_summaries] == [type(s[name]) for s in summaries]
    assert sorted(back) == [3, 10]
    for seed in (3, 10):
        for mine, theirs in zip(trajectories[seed], back[seed]):
            np.testing.assert_array_equal(mine.t_ode, theirs.t_ode)
            np.testing.assert_array_equal(mine.order, theirs.order)


@pytest.mark.parametrize("edit, message", [
    (lambda c: c["scales"]["quick"]["token_laws"]["amp"].update(laplace={"dims": [50, 75], "seeds": 4}),
     "scales.quick.token_laws.amp.laplace; allowed: a name of paper1.token_laws.amp"),
    (lambda c: c["paper1"]["token_laws"].update(laws=["rademacher", "sparse_p0.5"]),
     r"paper1.token_laws.laws = \['rademacher', 'sparse_p0.5'\]; allowed: a list with gaussian"),
    (lambda c: c["scales"]["quick"]["token_laws"]["gd"].update(seeds=[2, 2, 2]),
     r"scales.quick.token_laws.gd.seeds = \[2, 2, 2\]; allowed: one count, or one per d"),
    (lambda c: c["paper1"]["token_laws"].update(laws=["gaussian", "laplace"]),
     "paper1.token_laws.laws"),
    (lambda c: c["scales"]["quick"]["paper2"]["token_laws"].update(law_dims={"tied": {"sparse_p0.25": [100, 300]}}),
     r"scales.quick.paper2.token_laws.law_dims.tied.sparse_p0.25; allowed: a law of paper2.token_laws.laws"),
    (lambda c: c["scales"]["quick"]["paper2"]["token_laws"].update(law_dims={"untied": {"rademacher": [300]}}),
     "law_dims"),
])
def test_a_token_law_config_that_cannot_run_is_refused_with_its_key(edit, message):
    from aimrepro.config import ConfigError

    config = repository_config()
    edit(config)
    with pytest.raises(ConfigError, match=message):
        validated(config)

