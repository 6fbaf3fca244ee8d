"""Paper 2: theory tables over replicates and the claim rows that read them.

The tables (:mod:`aimrepro.paper2.theory_tables`) at small d, and the rows of
:mod:`aimrepro.claims.paper2_dynamics`, :mod:`aimrepro.claims.paper2_untied`
and :mod:`aimrepro.claims.paper2_moments` on synthetic inputs built so that a
row must pass, and perturbed so that it must not.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.claims import paper2_dynamics, paper2_untied, strong_recovery
from aimrepro.claims.table import OVERSTATED
from aimrepro.paper2 import analysis, theory_tables
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.strong_recovery import excess_loss
from aimrepro.paper2.trajectory import ORDER_NAMES, OrderParameters, Trajectory
from aimrepro.records.tables import split_rows


def synthetic(times, p12, *, t1=0.4, t2=0.4, q22=0.5, d=100) -> Trajectory:
    """A symmetric tied-like trajectory with a prescribed structural overlap p12(t)."""
    times = np.asarray(times, dtype=float)
    rows = [OrderParameters.symmetric([t1, t2], [[0.5, p + t1 * t2], [p + t1 * t2, q22]])
            .as_vector() for p in p12]
    steps = np.arange(times.size, dtype=np.int64)
    return Trajectory(times, np.asarray(rows).reshape(-1, len(ORDER_NAMES)), d, False, math.nan,
                      {"n_steps": steps, "n_samples": 8 * steps})


# --- analysis ---------------------------------------------------------------------------------


def test_samples_per_time_puts_both_parametrisations_on_one_sample_axis():
    tied = analysis.samples_per_time("tied", d=100, lr=0.005, batch=512)
    direct = analysis.samples_per_time("direct", d=100, lr=0.005, batch=512)
    assert tied == pytest.approx(100 * 512 / (4 * 0.005))
    # the same samples reach tied t = 3 and direct t = 3/4
    assert 3.0 * tied == pytest.approx(0.75 * direct)
    with pytest.raises(ValueError, match="param must be one of"):
        analysis.samples_per_time("both", d=100, lr=0.005, batch=512)
    with pytest.raises(ValueError, match="lr must be"):
        analysis.samples_per_time("tied", d=100, lr=0.0, batch=512)


def test_overlap_change_and_plateau_level_read_the_trajectory():
    t = np.linspace(0.0, 1.0, 11)
    run = synthetic(t, 0.2 * t)
    assert analysis.overlap_change(run, 0.05) == pytest.approx(0.01, rel=1e-9)
    assert math.isnan(analysis.overlap_change(run, 2.0))
    with pytest.raises(ValueError, match="t must be"):
        analysis.overlap_change(run, -1.0)
    level = analysis.plateau_level(run, 0.8)
    expected = np.mean(np.abs(run.symmetric_overlap[t >= 0.8 - 1e-12]))
    assert level == pytest.approx(expected) and level > analysis.plateau_level(run, 0.0)
    assert math.isnan(analysis.plateau_level(run, 5.0))


# --- theory tables at small d -------------------------------------------------------------------


def test_tied_velocity_table_exact_drift_is_the_flow_for_h1_and_not_for_h3():
    seeds = [0, 1]
    h1, diag = theory_tables.tied_velocity_table(ProblemSpec("tied", "h1", 1, 40), seeds)
    assert diag["polynomial"] and h1["seed"].tolist() == seeds and h1["d"].tolist() == [40, 40]
    # a loss quadratic in the indices: the exact finite-d drift is the Gaussian-equivalent one
    np.testing.assert_allclose(h1["exact"], h1["flow"], rtol=1e-8)
    # eq. 356: flow = eq. 17 + the two finite-d terms
    np.testing.assert_allclose(h1["flow"], h1["eq17"] + h1["centered"] + h1["overlap"],
                               rtol=1e-8, atol=1e-12)
    h3, _ = theory_tables.tied_velocity_table(ProblemSpec("tied", "h3", 1, 40), seeds)
    # the cubic link sees the non-Gaussian finite-d index: the exact drift is not the flow's
    assert not np.allclose(h3["exact"], h3["flow"], rtol=0.05)
    with pytest.raises(ValueError, match="spec.param = 'tied'"):
        theory_tables.tied_velocity_table(ProblemSpec("direct", "h1", 1, 40), seeds)
    with pytest.raises(ValueError, match="seeds must be distinct"):
        theory_tables.tied_velocity_table(ProblemSpec("tied", "h1", 1, 40), [0, 0])


def test_over_dims_stacks_tables_and_split_by_d_undoes_it():
    table, diag = theory_tables.over_dims(theory_tables.tied_velocity_table,
                                          ProblemSpec("tied", "h2", 1, 20), [20, 30], [0, 1])
    assert diag["converged"] and set(diag["per_d"]) == {"20", "30"}
    parts = theory_tables.split_by_d(table)
    assert sorted(parts) == [20, 30] and parts[30]["seed"].tolist() == [0, 1]
    by_seed = split_rows(table, "seed")
    assert list(by_seed) == [0, 1] and by_seed[1]["d"].tolist() == [20, 30]
    with pytest.raises(ValueError, match="dims must be distinct"):
        theory_tables.over_dims(theory_tables.tied_velocity_table,
                                ProblemSpec("tied", "h2", 1, 20), [20, 20], [0])


def test_flow_ensemble_round_trips_and_the_exact_h1_flow_is_the_matrix_flow():
    spec = ProblemSpec("tied", "h1", 1, 30)
    times = np.linspace(0.0, 0.5, 6)
    exact, diag = theory_tables.flow_ensemble_table(spec, [3, 4], times, flow="exact")
    gauss, _ = theory_tables.flow_ensemble_table(spec, [3, 4], times, flow="tied")
    assert diag["converged"] and set(diag["nfev"]) == {"3", "4"}
    flows_e = theory_tables.read_flow_ensemble(exact, 30)
    flows_g = theory_tables.read_flow_ensemble(gauss, 30)
    assert sorted(flows_e) == [3, 4] and len(flows_e[3]) == times.size
    for seed in (3, 4):
        np.testing.assert_allclose(flows_e[seed].overlap_ratio, flows_g[seed].overlap_ratio,
                                   atol=1e-5)
    assert not np.allclose(flows_g[3].p12, flows_g[4].p12)  # each replicate its own W(0)
    with pytest.raises(ValueError, match="flow must be one of"):
        theory_tables.flow_ensemble_table(spec, [0], times, flow="untied")
    with pytest.raises(ValueError, match="needs spec.param = 'direct'"):
        theory_tables.flow_ensemble_table(spec, [0], times, flow="direct")
    with pytest.raises(ValueError, match="polynomial link"):
        theory_tables.flow_ensemble_table(ProblemSpec("tied", "softmax", 2, 30), [0], times,
                                          flow="exact")


def test_radius_table_is_near_the_no_teacher_radius():
    spec = ProblemSpec("tied", "linear", 1, 60, normalisation="aim", loss_prefactor=1.0)
    table, diag = theory_tables.radius_table(spec, [0, 1])
    assert diag["converged"] and table["converged"].all()
    # the teacher pushes the singularity out, a little
    assert np.all(table["radius"] >= table["no_teacher_radius"] * 0.95)
    assert np.all(table["radius"] <= table["no_teacher_radius"] * 1.5)
    with pytest.raises(ValueError, match="tied linear case"):
        theory_tables.radius_table(ProblemSpec("tied", "h2", 1, 60), [0])


def test_untied_velocity_table_slaved_flow_is_close_to_eq42():
    spec = ProblemSpec("untied", "h1", 1, 60, rho=1.0, student_rho=1.0, init_scale=1.0,
                       init_scale_v=0.9, teacher_mean=0.0)
    table, diag = theory_tables.untied_velocity_table(spec, [0, 1, 2])
    assert diag["converged"]
    np.testing.assert_allclose(table["eq42"], table["eq42_1"] + table["eq42_2"])
    rel = np.abs(table["slaved"] - table["eq42"]) / np.abs(table["eq42"])
    assert np.all(rel < 0.3), rel
    with pytest.raises(ValueError, match="spec.param must be 'untied'"):
        theory_tables.untied_velocity_table(ProblemSpec("tied", "h1", 1, 60), [0])


# --- claim rows on synthetic inputs -----------------------------------------------------------


def _velocity(excess_flow, excess_exact, dims=(100, 200, 400, 800), n=5, noise=1e-3):
    """Tables of tied_velocity_table whose relative excesses are excess(d) + noise."""
    rng = np.random.default_rng(0)
    out = {}
    for d in dims:
        eq17 = np.full(n, 0.1)
        out[d] = {"eq17": eq17,
                  "flow": eq17 * (1 + excess_flow(d) + noise * rng.standard_normal(n)),
                  "exact": eq17 * (1 + excess_exact(d) + noise * rng.standard_normal(n))}
    return out


def test_eq17_rows_pass_on_a_one_over_d_excess_and_fail_on_a_constant_one():
    good = {("h3", d): t for d, t in _velocity(lambda d: 2.0 / d, lambda d: 20.0 / d).items()}
    rows = {r.id: r for r in paper2_dynamics.eq17_rows(good)}
    assert rows["p2-tied-eq17-flow-h3"].passed and rows["p2-tied-sgd-drift-h3"].passed
    assert "1/d" in rows["p2-tied-sgd-drift-h3"].claim
    bad = {("h3", d): t for d, t in _velocity(lambda d: 0.3, lambda d: 0.3 + 20.0 / d).items()}
    rows = {r.id: r for r in paper2_dynamics.eq17_rows(bad)}
    assert not rows["p2-tied-eq17-flow-h3"].passed


def test_eq23_rows_report_the_sign_for_every_link():
    equal, unequal = paper2_dynamics.eq23_tables(links=("h1", "h2", "h3", "linear"))
    rows = {r.id: r for r in paper2_dynamics.eq23_rows(equal, off_diagonal=unequal)}
    assert rows["p2-eq23-cross-gradient-sign"].passed
    assert rows["p2-eq23-cross-gradient-sign"].measured.startswith("4/4 negative")
    assert rows["p2-eq23-unequal-variances"].verdict == "informational"
    flipped = {**equal, "gamma12": -np.asarray(equal["gamma12"])}
    assert not paper2_dynamics.eq23_rows(flipped)[0].passed


def test_flow_trend_rows_see_direct_growth_and_tied_flatness():
    t = np.linspace(0, 4.0, 81)
    ensembles = {}
    for d in (100, 200, 400, 800):
        delay = 0.5 + 0.5 * math.log(d / 100)
        ensembles[("direct", "h2", d)] = [synthetic(t, 0.5 * np.clip(t - delay + s, 0, 1) / 1.0,
                                                    d=d) for s in (-0.05, 0.0, 0.05)]
        ensembles[("tied", "h2", d)] = [synthetic(t, 0.5 * np.clip(t - 0.5 + s, 0, 1), d=d)
                                        for s in (-0.05, 0.0, 0.05)]
    rows = {r.id: r for r in paper2_dynamics.flow_trend_rows(ensembles, threshold=0.3)}
    assert rows["p2-direct-flow-twr-grows-h2"].passed
    assert rows["p2-tied-flow-twr-flat-h2"].passed
    flat = {k: v for k, v in ensembles.items() if k[0] == "tied"}
    flat.update({("direct", "h2", d): runs for (p, _, d), runs in ensembles.items() if p == "tied"})
    assert not paper2_dynamics.flow_trend_rows(flat, threshold=0.3)[0].passed
    # every flow censored at the horizon: no error bar, no verdict either way
    never = {("direct", "h2", d): [synthetic(t, 0 * t + 0.01, d=d)] * 3 for d in (100, 200, 400)}
    assert not paper2_dynamics.flow_trend_rows(never, threshold=0.3)[0].passed


def test_scan_flow_rows_judge_the_sgd_minus_flow_gap_as_a_trend_in_d():
    t = np.linspace(0, 4.0, 401)
    scan, flows = {}, {}
    for d in (50, 100, 200):
        # SGD late by 2/d ± a seed spread: the gap extrapolates to zero
        shifts = [2.0 / d + s for s in (-0.02, 0.0, 0.025)]
        scan[("direct", "h2", d)] = [synthetic(t, 0.5 * np.clip(t - 1.0 - x, 0, 1), d=d)
                                     for x in shifts]
        flows[("direct", "h2", d)] = [synthetic(t, 0.5 * np.clip(t - 1.0, 0, 1), d=d)
                                      for _ in shifts]
    [row] = paper2_dynamics.scan_flow_rows(scan, flows, threshold=0.3)
    assert row.id == "p2-s3-sgd-follows-flow-direct-h2" and row.passed, row.note
    assert "d = 50:" in row.note and "fit e∞ + b/d" in row.note
    # a gap that does not close with d (SGD always 0.5 late) fails
    late = {k: [synthetic(t, 0.5 * np.clip(t - 1.5 - x, 0, 1), d=k[2]) for x in (-0.02, 0, 0.025)]
            for k in scan}
    assert not paper2_dynamics.scan_flow_rows(late, flows, threshold=0.3)[0].passed
    # unpaired flows: no row
    assert paper2_dynamics.scan_flow_rows(scan, {}, threshold=0.3) == []
    # the links scanned for Figure 2 only carry their own id and section
    [named] = paper2_dynamics.scan_flow_rows(scan, flows, threshold=0.3, id_prefix="p2-x",
                                             section="§ here")
    assert (named.id, named.section, named.note) == ("p2-x-direct-h2", "§ here", row.note)


def test_figure2_flow_rows_compare_sgd_with_its_exact_flow():
    t = np.linspace(0, 3.0, 121)
    shift = (0.0, 0.01, -0.01)
    runs = {("tied", "h3"): [synthetic(t, 0.5 * np.clip(t - 0.5 + s, 0, 1) + 0.2 * t * (t < 0.5))
                             for s in shift]}
    exact = {"h3": [synthetic(t, 0.5 * np.clip(t - 0.5, 0, 1) + 0.2 * t * (t < 0.5))
                    for _ in shift]}
    gauss = {("tied", "h3"): [synthetic(t, 0.5 * np.clip(t - 1.7, 0, 1) + 0.05 * t * (t < 1.7))
                              for _ in shift]}
    rows = {r.id: r for r in paper2_dynamics.figure2_flow_rows(runs, gauss, exact, threshold=0.3)}
    assert rows["p2-fig2-sgd-follows-flow-h3"].passed
    far = {"h3": gauss[("tied", "h3")]}
    rows = {r.id: r for r in paper2_dynamics.figure2_flow_rows(runs, gauss, far, threshold=0.3)}
    assert not rows["p2-fig2-sgd-follows-flow-h3"].passed


def test_fig2_direct_row_is_overstated_when_direct_escapes_but_its_time_grows_with_d():
    t = np.linspace(0, 0.75, 31)
    figure2 = {("tied", "h2"): [synthetic(t * 4, 0.5 * np.minimum(4 * t, 1))],
               ("direct", "h2"): [synthetic(t, 0.5 * np.minimum(t, 1))]}
    growth = paper2_dynamics._row(id="p2-direct-flow-twr-grows-h2", section="x", claim="x",
                                  expected="x", measured="dT_wr/d ln d = 0.3", tolerance="x",
                                  passed=True)
    rows = paper2_dynamics._figure2_rows(figure2, 0.3, {"h2": growth}, 1e6)
    assert rows[0].verdict == OVERSTATED and "grows with d" in rows[0].note
    failed = paper2_dynamics._figure2_rows(figure2, 0.3, {}, 1e6)
    assert failed[0].passed is False


def test_eq42_rows_judge_the_trend_of_the_relative_difference():
    rng = np.random.default_rng(1)

    def table(d, offset):
        eq42 = np.full(5, -0.2)
        return {"eq42": eq42, "slaved": eq42 * (1 + offset + 3.0 / d
                                                + 1e-3 * rng.standard_normal(5)),
                "m_star": np.zeros(5)}

    good = {("h1", 0.0, d): table(d, 0.0) for d in (100, 200, 400)}
    rows = paper2_untied.eq42_rows(good)
    assert rows[0].id == "p2-untied-eq42-h1-m20" and rows[0].passed
    bad = {("h1", 0.0, d): table(d, 0.2) for d in (100, 200, 400)}
    assert not paper2_untied.eq42_rows(bad)[0].passed


def test_strong_recovery_rows_on_the_direct_ode_and_a_wrong_prediction():
    spec = ProblemSpec("direct", "h1", 1, 30)
    times = np.linspace(0.0, 10.0, 201)
    table, _ = theory_tables.flow_ensemble_table(spec, [0, 1], times, flow="direct")
    flows = theory_tables.read_flow_ensemble(table, 30)
    ensembles = {("direct", "h1", 30): [flows[0], flows[1]]}
    rates = [theory_tables.predicted_loss_rate(spec, seed) for seed in (0, 1)]
    assert rates == pytest.approx([4.0, 4.0], rel=1e-6)  # 4g, g = 1 for h1 at unit variance
    rows = strong_recovery.flow_rate_rows(ensembles, {("direct", "h1", 30): rates},
                                                threshold=0.3)
    assert rows[0].id == "p2-strong-rate-direct-h1" and rows[0].passed, rows[0].note
    wrong = strong_recovery.flow_rate_rows(
        ensembles, {("direct", "h1", 30): [1.5 * r for r in rates]}, threshold=0.3)
    assert not wrong[0].passed
    with pytest.raises(ValueError, match="tied or direct"):
        theory_tables.predicted_loss_rate(ProblemSpec("tied", "softmax", 2, 30), 0)


def test_strong_recovery_sgd_rows_extrapolate_the_rate_to_zero_step_size():
    from aimrepro.paper2.sgd import SGDRun, SGDSettings
    spec = ProblemSpec("direct", "h1", 1, 30, rho=0.5, normalisation="unit_variance")
    runs = {lr: [SGDRun(spec, SGDSettings(lr=lr, batch=64, horizon=4.0, weight_decay=0.0,
                                          n_records=41), seed).run() for seed in (0, 1)]
            for lr in (0.1, 0.05)}
    rates = [theory_tables.predicted_loss_rate(spec, seed) for seed in (0, 1)]
    key = ("direct", "h1", 30)
    [row] = strong_recovery.sgd_rate_rows({key: runs}, {key: rates})
    assert row.id == "p2-strong-rate-sgd-direct-h1" and row.passed, row.note
    assert "lr 0.1:" in row.note and "no additive noise floor" in row.note
    assert not strong_recovery.sgd_rate_rows({key: runs},
                                                        {key: [1.3 * r for r in rates]})[0].passed
    # one step size cannot separate the O(lr) shift: no row
    assert strong_recovery.sgd_rate_rows({key: {0.1: runs[0.1]}}, {key: rates}) == []


def test_untied_truncation_table_converges_in_m_and_its_row_judges_it():
    from aimrepro.paper2.untied.truncation_table import truncation_error_table
    spec = ProblemSpec("untied", "h1", 1, 40, rho=1.0, student_rho=1.0, init_scale=1.0,
                       init_scale_v=0.9, teacher_mean=0.5)
    table, diag = truncation_error_table(spec, [0, 1], np.linspace(0.0, 0.08, 5), max_order=4)
    assert diag["converged"] and sorted(set(table["order"].tolist())) == [0, 2, 3, 4]
    case = {"link": "h1", "teacher_mean": 0.5, "d": 40, "horizon": 0.08}
    [row] = paper2_untied.truncation_rows([(case, table)])
    assert row.id == "p2-untied-truncation-h1-m20.5" and row.passed, row.note
    # swap the orders: the error now grows with M
    swapped = dict(table)
    order = np.asarray(table["order"]).copy()
    order[table["order"] == 2], order[table["order"] == 4] = 4, 2
    swapped["order"] = order
    assert not paper2_untied.truncation_rows([(case, swapped)])[0].passed
    # SGD from the same replicates sits near the flow and sees the truncations' error
    from aimrepro.paper2.sgd import SGDRun, SGDSettings
    times = np.linspace(0.0, 0.08, 5)
    sgd = {seed: SGDRun(spec, SGDSettings(lr=0.01, batch=64, horizon=0.08, weight_decay=0.0,
                                          record_times=tuple(times)), seed).run()
           for seed in (0, 1)}
    [row] = paper2_untied.truncation_sgd_rows([(case, table)], [sgd])
    assert row.id == "p2-untied-truncation-sgd-h1-m20.5" and row.passed, row.note
    assert "M = 2, 3, 4" in row.measured
    assert not paper2_untied.truncation_sgd_rows([(case, swapped)], [sgd])[0].passed
    # SGD far from the flow: its distance hides the truncation error, no order is above the floor
    from types import SimpleNamespace
    far = {seed: SimpleNamespace(t_ode=run.t_ode, symmetric_overlap=run.symmetric_overlap + 0.5,
                                 blew_up=False) for seed, run in sgd.items()}
    [hidden] = paper2_untied.truncation_sgd_rows([(case, table)], [far])
    assert not hidden.passed and "over M = none" in hidden.measured
    assert paper2_untied.truncation_sgd_rows([(case, table)], [{}]) == []
    with pytest.raises(ValueError, match="max_order must be"):
        truncation_error_table(spec, [0], np.linspace(0.0, 0.08, 5), max_order=1)
    with pytest.raises(ValueError, match="untied with T = 1"):
        truncation_error_table(ProblemSpec("tied", "h1", 1, 40), [0], np.linspace(0, 0.1, 3),
                               max_order=3)


def _untied_run_with_excess(times, excess, d=16) -> Trajectory:
    """An untied-like trajectory whose h₁ excess loss is ``excess``: Ω = [[1, 1 − δ], [1 − δ, 1]], Ψ = 0.

    For h₁ and ℒ = ½(G₁ − G₂)², Φ − Φ* = ½ Var(G₁ − G₂) = δ.
    """
    rows = [OrderParameters([0.0, 0.0], np.zeros((2, 2)), [[1.0, 1.0 - e], [1.0 - e, 1.0]])
            .as_vector() for e in excess]
    return Trajectory(np.asarray(times, float), np.asarray(rows).reshape(-1, len(ORDER_NAMES)), d)


def test_untied_decay_table_and_its_rows_read_the_late_rate():
    spec = ProblemSpec("untied", "h1", 1, 16, rho=1.0, student_rho=1.0, init_scale=1.0,
                       init_scale_v=0.9, teacher_mean=0.0)
    times = np.linspace(0.0, 6.0, 31)
    table, diag = theory_tables.untied_decay_table(spec, [0, 1], times, window_start=2.0)
    assert diag["converged"] and set(diag["per_seed"]) == {"0", "1"}
    first = table["seed"] == 0
    excess, predicted = table["excess"][first], table["predicted"][first]
    assert np.all(np.isnan(predicted[:10])) and predicted[10] == pytest.approx(excess[10])
    assert excess[-1] < 1e-3 * excess[10] and np.ptp(table["slowest_loss_rate"][first]) == 0
    case = {"link": "h1", "teacher_mean": 0.0, "d": 16, "window_start": 2.0}
    [row] = strong_recovery.untied_rate_rows([(case, table)], [{}])
    assert row.id == "p2-untied-strong-rate-h1-m20" and row.passed, row.note
    assert "4 g c_min(C)" in row.note
    # a linearisation 30 % faster than the flow fails
    wrong = dict(table, predicted=table["predicted"] * np.exp(-0.3 * 1.9 * table["t_ode"]))
    assert not strong_recovery.untied_rate_rows([(case, wrong)], [{}])[0].passed
    with pytest.raises(ValueError, match="window_start"):
        theory_tables.untied_decay_table(spec, [0], times, window_start=2.05)
    with pytest.raises(ValueError, match="untied attention with T = 1"):
        theory_tables.untied_decay_table(ProblemSpec("tied", "h1", 1, 16), [0], times,
                                         window_start=2.0)

    # SGD rows on runs whose excess decays at the flow's rate plus an O(lr) shift
    flow_rate = {}
    for seed in (0, 1):
        rows = table["seed"] == seed
        t, e = table["t_ode"][rows], table["excess"][rows]
        late = t >= 4.0
        flow_rate[seed] = -np.polyfit(t[late], np.log(e[late]), 1)[0]
    probe = _untied_run_with_excess(times, 1e-2 * np.exp(-times))
    potential = Potential(MSELoss(make_link("h1"), make_link("h1"), 0.5), 1)
    assert excess_loss(potential, probe, kind="untied") == pytest.approx(1e-2 * np.exp(-times))

    def sgd(offset, shift):
        return {lr: {seed: _untied_run_with_excess(
            times, 0.1 * np.exp(-(flow_rate[seed] + offset + shift * lr
                                  + 0.002 * (seed - 0.5)) * times)) for seed in (0, 1)}
            for lr in (0.04, 0.02)}

    [_, ok] = strong_recovery.untied_rate_rows([(case, table)], [sgd(0.0, 1.5)])
    assert ok.id == "p2-untied-strong-rate-sgd-h1-m20" and ok.passed, ok.note
    assert ok.measured == pytest.approx(0.0, abs=2e-3)
    [_, slow] = strong_recovery.untied_rate_rows([(case, table)], [sgd(-0.3, 1.5)])
    assert slow.verdict == "FAIL", slow.note
    # one step size cannot separate the O(lr) shift: no SGD row
    assert len(strong_recovery.untied_rate_rows([(case, table)],
                                                  [{0.04: sgd(0.0, 0.0)[0.04]}])) == 1
