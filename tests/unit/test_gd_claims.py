"""The GD claim rows (docs/paper1.md §6, §8.6) on synthetic summary tables, and the K -> infinity identity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.claims import paper1_gd as gd_claims
from aimrepro.claims.paper1_gd import GDInputs, infinite_average, paper1_gd_claims
from aimrepro.numerics.stats import control_variate_mean
from aimrepro.paper1.state_evolution import solve_se
from aimrepro.paper1.channels import make_channel


def test_the_infinite_average_identity_holds_for_iid_students():
    # students = m + noise around a fixed mean m, target 0: the mean of K has error |m|² + E|noise|²/K
    rng = np.random.default_rng(0)
    p, K, draws = 50, 4, 20000
    m = rng.standard_normal(p) * 0.3
    students = m + rng.standard_normal((draws, K, p))
    single = np.mean(np.sum(students ** 2, axis=2))
    averaged = np.mean(np.sum(students.mean(axis=1) ** 2, axis=1))
    assert infinite_average(single, averaged, K) == pytest.approx(np.sum(m ** 2), abs=0.15)
    assert math.isnan(infinite_average(1.0, 1.0, 1))


def table_for(T, alphaT, single_factor, averaged_excess, K, zero_from):
    """A GD summary table whose errors are set relative to the SE: single = factor × SE, A∞ = SE + excess."""
    alphaT = np.asarray(alphaT, float)
    channel = make_channel("softmax", T=T, beta=1.0)
    measurements = T * T + T - 2
    se = np.array([solve_se(channel, a / measurements, 0.5).mmse for a in alphaT])
    single = single_factor * se
    limit = se + averaged_excess
    averaged = limit + (single - limit) / K
    zero = alphaT >= zero_from
    single[zero], averaged[zero] = 1e-6, 1e-7
    n = alphaT.size
    return {"alphaT": alphaT, "alpha": alphaT / measurements, "single_mean": single, "averaged_mean": averaged,
            "averaged_std": np.full(n, 0.01), "se_mmse": se, "n_clean": np.full(n, 4)}


def curve(T, K=8):
    return {"T": T, "rho": 0.5, "d": 50, "inits": K, "seeds": [0, 1, 2, 3]}


GRID = [0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.1, 1.5]


def rows_by_id(rows):
    return {row.id: row for row in rows}


def test_gd_like_the_published_one_passes_every_row():
    curves = [curve(2), curve(4)]
    tables = [table_for(2, GRID, 1.9, 0.045, 8, 1.1), table_for(4, GRID, 2.1, 0.045, 8, 1.1)]
    rows = rows_by_id(paper1_gd_claims(GDInputs(curves, tables)))
    assert set(rows) == {"p1-gd-averaged-se", "p1-gd-single-twice-mmse", "p1-gd-zero-error-onset"}
    assert rows["p1-gd-averaged-se"].verdict == "informational"  # one small d: the trend row judges
    assert all(row.passed for row in rows.values() if row.id != "p1-gd-averaged-se"), [
        row.note for row in rows.values()]
    assert rows["p1-gd-averaged-se"].measured == pytest.approx(0.045, abs=1e-9)
    assert rows["p1-gd-single-twice-mmse"].measured == pytest.approx(2.0, abs=0.1)
    assert rows["p1-gd-zero-error-onset"].measured == pytest.approx(1.1)
    assert "T=2: (0.8, 1.1]" in rows["p1-gd-zero-error-onset"].note


def test_each_row_fails_when_its_claim_does_not_hold():
    # averaged 0.2 above SE; singles 3 x SE; zero error only from 1.7 (bracket (1.6, 1.7] misses
    # [alpha_T,PR, 2 alpha_T,PR] = [0.75, 1.5])
    grid = sorted(GRID + [1.6, 1.7])
    rows = rows_by_id(paper1_gd_claims(GDInputs([curve(3)], [table_for(3, grid, 3.0, 0.2, 8, 1.7)])))
    assert rows["p1-gd-averaged-se"].verdict == "informational"  # one small d: the trend row judges
    assert rows["p1-gd-averaged-se"].measured == pytest.approx(0.2)
    assert not rows["p1-gd-single-twice-mmse"].passed
    assert not rows["p1-gd-zero-error-onset"].passed
    # never reaching zero error fails too, and says so
    stuck = table_for(3, GRID, 2.0, 0.0, 8, 99)
    stuck["single_mean"] += 0.01
    stuck["averaged_mean"] += 0.01
    never = rows_by_id(paper1_gd_claims(GDInputs([curve(3)], [stuck])))
    assert not never["p1-gd-zero-error-onset"].passed and "never below" in never["p1-gd-zero-error-onset"].note


def test_points_below_the_small_alpha_window_are_listed_not_counted():
    table = table_for(2, GRID, 2.0, 0.0, 8, 1.1)
    table["single_mean"][0] = 19.0 * table["se_mmse"][0]  # alpha_T = 0.01 < SMALL_ALPHA_T_MIN
    row = rows_by_id(paper1_gd_claims(GDInputs([curve(2)], [table])))["p1-gd-single-twice-mmse"]
    assert row.passed and "left out" in row.note and "19" in row.note
    assert gd_claims.SMALL_ALPHA_T_MIN > 0.01


def test_averaged_gd_below_the_bayes_optimal_error_fails():
    table = table_for(2, GRID, 2.0, -0.1, 8, 1.1)
    row = rows_by_id(paper1_gd_claims(GDInputs([curve(2)], [table])))["p1-gd-averaged-se"]
    assert row.verdict == "FAIL" and "below SE" in row.note


def test_zero_error_below_the_bayes_threshold_fails_the_onset_row():
    # alpha_T,PR = 2 rho - rho^2 = 0.75 at rho = 0.5: zero error from 0.6 on is impossible for the optimum
    row = rows_by_id(paper1_gd_claims(GDInputs([curve(2)], [table_for(2, GRID, 2.0, 0.0, 8, 0.6)])))["p1-gd-zero-error-onset"]
    assert row.failed and "0.75" in row.claim


def gd_trend(dims=(50, 75, 100), K=32):
    return {"T": 4, "rho": 0.5, "beta": 1.0, "alpha": 0.0085, "alphaT": 0.153,
            "points": [{"d": d, "inits": K, "seeds": list(range(12)), "runs": []} for d in dims]}


def gd_runs(excess_of_d, dims=(50, 75, 100), K=32, n=12, spread=0.02, seed=0):
    """Draws whose mean of K sits excess(d) above (1 + 1/K) SE and whose single students sit at 2 SE."""
    rng = np.random.default_rng(seed)
    se_value = solve_se(make_channel("softmax", T=4, beta=1.0), 0.0085, 0.5).mmse
    out = []
    for d in dims:
        noise = rng.standard_normal(n)
        noise = (noise - noise.mean()) / noise.std(ddof=1) * spread
        out.append([{"averaged_error": (1 + 1 / K) * se_value + excess_of_d(d) + x,
                     "single_errors": np.full(K, 2 * se_value), "n_diverged": 0} for x in noise])
    return out


def gd_trend_row(runs, trend=None):
    rows = rows_by_id(paper1_gd_claims(GDInputs([curve(2)], [table_for(2, GRID, 2.0, 0.0, 8, 1.1)],
                                       trend=trend or gd_trend(), trend_runs=runs)))
    return rows["p1-gd-trend-averaged"]


def test_averaged_gd_trend_passes_when_the_excess_vanishes_like_one_over_d():
    row = gd_trend_row(gd_runs(lambda d: 2.0 / d))
    assert row.passed and abs(row.measured) < 0.01
    for d in (50, 75, 100):
        assert f"d = {d}: " in row.note
    assert "A∞" in row.note and "single GD" in row.note


def test_an_excess_that_levels_off_is_overstated_and_a_large_one_fails():
    row = gd_trend_row(gd_runs(lambda d: 0.05, spread=0.01))
    assert row.verdict == "overstated" and row.measured == pytest.approx(0.05, abs=5e-3)
    far = gd_trend_row(gd_runs(lambda d: 0.7, spread=0.01))
    assert far.failed


def test_a_gd_trend_without_sizes_says_so():
    row = gd_trend_row([], trend=gd_trend(dims=()))
    assert row.verdict == "informational" and "not measured" in row.measured


def test_an_imprecise_gd_trend_is_not_decisive():
    row = gd_trend_row(gd_runs(lambda d: 0.05, spread=0.2))
    assert row.verdict == "informational" and "not decisive" in row.note


# --- GAMP-RIE on the same datasets as control variate (module notes) ----------------------


def test_the_control_variate_estimate_is_unbiased_and_its_error_is_its_spread():
    """Correlated (G, A) draws: Ĝ averages to E[G] and its s.e. is Ĝ's spread over experiments."""
    rng = np.random.default_rng(3)
    c, n, m, true_mean = 1.03, 8, 40, 0.02
    estimates, errors, plain = [], [], []
    for _ in range(3000):
        amp = 0.05 * rng.standard_normal(m) + 0.01                            # E[A] = 0.01
        gd = true_mean + c * (amp[:n] - 0.01) + 0.01 * rng.standard_normal(n)  # E[G] = 0.02
        estimate, error, count = control_variate_mean(gd, amp[:n], amp, c)
        estimates.append(estimate), errors.append(error), plain.append(np.std(gd, ddof=1) / math.sqrt(n))
        assert count == n
    assert np.mean(estimates) == pytest.approx(true_mean, abs=3 * np.std(estimates) / math.sqrt(3000))
    assert np.std(estimates) == pytest.approx(np.mean(errors), rel=0.1)
    # Var = Var(D)/n + c² Var(A)/m (D and A independent here): the draws' spread is left only in
    # the mean of the m AMP draws
    assert np.mean(errors) == pytest.approx(math.sqrt(0.01 ** 2 / n + c * c * 0.05 ** 2 / m), rel=0.1)
    assert np.mean(errors) < np.mean(plain) / 1.8


def test_the_control_variate_refuses_mismatched_draws():
    with pytest.raises(ValueError, match="one control value per paired draw"):
        control_variate_mean([0.1, 0.2], [0.1], [0.1, 0.2], 1.1)
    with pytest.raises(ValueError, match="at least as many control draws"):
        control_variate_mean([0.1, 0.2], [0.1, 0.2], [0.1], 1.1)
    assert math.isnan(control_variate_mean([0.1], [0.1], [0.1, 0.2], 1.1)[1])


def paired_runs(excess_of_d, dims=(50, 75, 100), K=32, n=12, m=96, spread=0.06, seed=1):
    """GD draws and AMP draws of one experiment: the first n AMP draws share the GD draws' data.

    The draw's difficulty moves both errors (AMP by a, GD by (1 + 1/K) a); GD adds a small
    noise of its own.  Returns (GD summaries, AMP summaries) per d.
    """
    rng = np.random.default_rng(seed)
    se_value = solve_se(make_channel("softmax", T=4, beta=1.0), 0.0085, 0.5).mmse
    c = 1 + 1 / K
    gd, amp = [], []
    for d in dims:
        a = spread * rng.standard_normal(m)
        own = 0.005 * rng.standard_normal(n)
        gd.append([{"averaged_error": c * se_value + excess_of_d(d) + c * a[i] + own[i],
                    "single_errors": np.full(K, 2 * se_value), "n_diverged": 0} for i in range(n)])
        amp.append([{"error": se_value + x, "status": "converged"} for x in a])
    return gd, amp


def trend_with_amp(dims=(50, 75, 100), m=96):
    trend = gd_trend(dims)
    for point in trend["points"]:
        point["amp_runs"] = [f"amp_{i}" for i in range(m)]
    return trend


def test_the_gd_trend_with_amp_on_the_same_data_is_decided_where_gd_alone_is_not():
    runs, amp = paired_runs(lambda d: 2.0 / d)
    alone = gd_trend_row(runs)
    assert alone.verdict == "informational" and "not decisive" in alone.note
    rows = rows_by_id(paper1_gd_claims(GDInputs([curve(2)], [table_for(2, GRID, 2.0, 0.0, 8, 1.1)],
                                       trend=trend_with_amp(), trend_runs=runs, trend_amp_runs=amp)))
    row = rows["p1-gd-trend-averaged"]
    assert "control variate" in row.note and "GD - (1 + 1/K) AMP" in row.note
    assert row.passed and abs(row.measured) < 0.02


def test_unusable_amp_runs_leave_their_draws_out_of_the_pairs():
    runs, amp = paired_runs(lambda d: 2.0 / d)
    for point in amp:
        point[0]["status"] = "max_iter"
    rows = rows_by_id(paper1_gd_claims(GDInputs([curve(2)], [table_for(2, GRID, 2.0, 0.0, 8, 1.1)],
                                       trend=trend_with_amp(), trend_runs=runs, trend_amp_runs=amp)))
    note = rows["p1-gd-trend-averaged"].note
    assert "(11 pairs)" in note and "(95 draws)" in note
