"""aimrepro.claims.trends: the finite-size fit e(d) = e∞ + b/d (+ c/d²) that simulation rows are judged on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.claims.table import INFORMATIONAL
from aimrepro.claims.trends import NOT_DECISIVE, fit_finite_size, fit_trend, judge_trend, mean_and_sem


def test_exact_one_over_d_data_is_fitted_exactly():
    d = [50, 100, 200, 400]
    trend = fit_finite_size(d, [0.01 + 2.0 / x for x in d], [0.001] * 4, n=[8] * 4)
    assert trend.limit == pytest.approx(0.01, abs=1e-12)
    assert trend.slope == pytest.approx(2.0, rel=1e-9)
    assert trend.chi2 == pytest.approx(0.0, abs=1e-12) and trend.dof == 2 and trend.consistent
    assert trend.within(0.011) and not trend.within(0.005)
    assert trend.shrinks()
    assert trend.per_d_text().startswith("d = 50: 0.05 ± 0.001 (8 runs); d = 100: 0.03")


def test_the_limit_error_matches_monte_carlo_of_the_noise():
    """The reported se(e∞) is the spread of e∞ over noise draws, when the model is right."""
    rng = np.random.default_rng(3)
    d = np.array([50, 100, 150, 200])
    sem = np.array([0.02, 0.012, 0.01, 0.008])
    limits = []
    for _ in range(2000):
        e = 0.05 + 1.5 / d + rng.normal(0, sem)
        limits.append(fit_finite_size(d, e, sem).limit)
    reference = fit_finite_size(d, 0.05 + 1.5 / d, sem)
    spread = float(np.std(limits))
    assert np.mean(limits) == pytest.approx(0.05, abs=3 * spread / math.sqrt(2000))
    # with chi2 = 0 no inflation: the formula's error is the true spread within 10 %
    assert reference.limit_se == pytest.approx(spread, rel=0.1)


def test_a_trend_that_does_not_shrink_like_one_over_d_is_flagged():
    d = [50, 100, 150, 200]
    flat_gap = fit_finite_size(d, [0.03, 0.031, 0.029, 0.030], [0.001] * 4)
    assert flat_gap.consistent and not flat_gap.within(0.01) and not flat_gap.shrinks()
    zigzag = fit_finite_size(d, [0.05, 0.01, 0.06, 0.0], [0.001] * 4)
    assert not zigzag.consistent and zigzag.limit_se > 0.01  # the scatter widens the error


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="at least 2 distinct sizes"):
        fit_finite_size([100, 100], [0.1, 0.1], [0.01, 0.01])
    with pytest.raises(ValueError, match="error of the mean finite and > 0"):
        fit_finite_size([50, 100], [0.1, 0.05], [math.nan, 0.01])


def test_mean_and_sem_drop_non_finite_values():
    mean, sem, n = mean_and_sem([1.0, 3.0, math.nan])
    assert (mean, n) == (2.0, 2) and sem == pytest.approx(1.0)
    assert math.isnan(mean_and_sem([1.0])[1])


def test_a_trend_is_judged_only_when_its_extrapolation_can_tell():
    """s.e.(e∞) ≤ tolerance/2 keeps the row's own check; a wider one makes the row informational."""
    dims = [50, 100, 200]
    precise = fit_finite_size(dims, [0.05, 0.03, 0.02], [0.002, 0.002, 0.002], [8, 8, 8])
    noisy = fit_finite_size(dims, [0.05, 0.03, 0.02], [0.05, 0.05, 0.05], [8, 8, 8])
    assert precise.decisive(0.02) and not noisy.decisive(0.02)
    assert judge_trend(precise, 0.02, True, "note") == {"passed": True, "note": "note"}
    assert judge_trend(precise, 0.02, False, "note") == {"passed": False, "note": "note"}
    # the noisy fit would pass |e∞| <= tol + 2 s.e. whatever its data: it is not judged
    assert noisy.within(0.02)
    verdict = judge_trend(noisy, 0.02, True, "note")
    assert verdict["verdict"] == INFORMATIONAL and "passed" not in verdict
    assert verdict["note"].startswith(f"note; {NOT_DECISIVE}")


# --- the form of the trend: 1/d, and 1/d² only where 1/d is rejected ----------------------


def test_fit_trend_keeps_the_one_over_d_form_when_it_fits():
    d = [50, 100, 200, 400]
    fit = fit_trend(d, [0.01 + 2.0 / x for x in d], [0.001] * 4, [8] * 4)
    assert fit.powers == (0, 1) and fit.form == "e∞ + b/d"
    assert fit.limit == pytest.approx(0.01)


def test_fit_trend_adds_the_next_order_where_one_over_d_is_rejected():
    d = [100, 200, 400, 800, 1600]
    mean = [0.002 + 300.0 / x - 12000.0 / x ** 2 for x in d]
    sem = [1e-3] * 5
    assert not fit_finite_size(d, mean, sem).consistent
    fit = fit_trend(d, mean, sem, [40] * 5)
    assert fit.powers == (0, 1, 2) and fit.consistent
    assert fit.limit == pytest.approx(0.002, abs=1e-9)
    assert fit.curvature == pytest.approx(-12000.0, rel=1e-6)
    assert "c = " in fit.fit_text() and "e∞ + b/d + c/d²" in fit.fit_text()


def test_fit_trend_needs_a_degree_of_freedom_for_the_second_form():
    d = [100, 200, 400]  # three sizes: a three-term fit would have none
    fit = fit_trend(d, [300.0 / x - 12000.0 / x ** 2 for x in d], [1e-3] * 3)
    assert fit.powers == (0, 1) and not fit.consistent


def test_fit_trend_keeps_the_rejected_one_over_d_fit_when_neither_form_fits():
    d = [100, 200, 400, 800]
    fit = fit_trend(d, [0.0, 1.0, 0.0, 1.0], [1e-3] * 4)
    assert fit.powers == (0, 1) and not fit.consistent


def test_fit_finite_size_refuses_other_forms():
    with pytest.raises(ValueError, match="powers"):
        fit_finite_size([1, 2, 3], [0, 0, 0], [1, 1, 1], powers=(0, 2))
