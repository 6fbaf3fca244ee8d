"""Trend designs (aimrepro.claims.design): the predicted s.e. is the fit's, and the optimiser's choice is sound."""

import math

import numpy as np
import pytest

from aimrepro.claims.design import PowerLaw, design_trend, extrapolation_se, fit_power_law
from aimrepro.claims.trends import fit_finite_size


def test_power_law_recovers_exponent_and_scale():
    d = np.array([50, 100, 200, 400])
    law = fit_power_law(d, 3.0 * (d / 100.0) ** -0.7)
    assert law.exponent == pytest.approx(-0.7, abs=1e-12)
    assert law.scale == pytest.approx(3.0, rel=1e-12)
    assert law.residual == pytest.approx(0.0, abs=1e-12)
    assert law(400) == pytest.approx(3.0 * 4 ** -0.7)


def test_power_law_with_fixed_exponent_fits_the_scale_only():
    d = np.array([100, 200])
    law = fit_power_law(d, [2.0, 9.0], exponent=2.0)
    # ln scale is the mean of ln y - 2 ln(d/100): ln 2 and ln(9/4)
    assert law.scale == pytest.approx(math.sqrt(2.0 * 9.0 / 4.0))
    assert law.exponent == 2.0


@pytest.mark.parametrize("bad", [[1.0, -1.0], [1.0, math.nan]])
def test_power_law_refuses_non_positive_values(bad):
    with pytest.raises(ValueError, match="finite and > 0"):
        fit_power_law([50, 100], bad)


def test_extrapolation_se_is_the_covariance_of_fit_finite_size():
    dims, seeds = [50, 100, 200], [4, 9, 16]
    spread = PowerLaw(0.02, -1.0)
    sems = [spread(d) / math.sqrt(n) for d, n in zip(dims, seeds)]
    fit = fit_finite_size(dims, [0.1, 0.05, 0.02], sems, seeds)
    # the fit's s.e. is inflated by sqrt(chi2/dof) only when chi2/dof > 1: pick means on the line
    exact = fit_finite_size(dims, [1.0 / d for d in dims], sems, seeds)
    assert exact.chi2 == pytest.approx(0.0, abs=1e-18)
    assert extrapolation_se(dims, seeds, spread) == pytest.approx(exact.limit_se, rel=1e-10)
    assert fit.limit_se >= exact.limit_se


def test_extrapolation_se_matches_monte_carlo():
    """The predicted s.e. is the spread of e∞ over repeated simulated experiments."""
    rng = np.random.default_rng(7)
    dims, seeds = np.array([60, 120, 240]), np.array([8, 8, 8])
    spread = PowerLaw(0.03, -0.5)
    limits = []
    for _ in range(2000):
        means = [0.01 + 2.0 / d + spread(d) * rng.standard_normal(n).mean() for d, n in zip(dims, seeds)]
        sems = [spread(d) / math.sqrt(n) for d, n in zip(dims, seeds)]  # the true errors of the mean
        design = np.stack([np.ones(3), 1.0 / dims], axis=1) / np.asarray(sems)[:, None]
        coef = np.linalg.lstsq(design, np.asarray(means) / np.asarray(sems), rcond=None)[0]
        limits.append(coef[0])
    predicted = extrapolation_se(dims, seeds, spread)
    assert np.mean(limits) == pytest.approx(0.01, abs=3 * predicted / math.sqrt(2000))
    assert np.std(limits) == pytest.approx(predicted, rel=0.05)


def test_extrapolation_se_is_infinite_when_the_form_is_not_identified():
    assert extrapolation_se([100, 100], [5, 5], PowerLaw(1.0, 0.0)) == math.inf
    assert extrapolation_se([100, 200, 400], [5, 5, 5], PowerLaw(1.0, 0.0), powers=(0, 1, 2, 3)) == math.inf


def test_design_reaches_the_target_cheaper_than_a_uniform_design():
    spread, cost = PowerLaw(0.01, -0.5), PowerLaw(2.0, 2.0)
    candidates = [50, 75, 100, 150, 200, 300]
    design = design_trend(candidates, spread, cost, target_se=0.004, budget=5000)
    assert design.reaches_target
    assert design.predicted_se <= 0.004
    assert design.predicted_se == pytest.approx(extrapolation_se(design.dims, design.seeds, spread))
    assert design.cpu_seconds == pytest.approx(sum(n * cost(d) for d, n in zip(design.dims, design.seeds)))
    assert min(design.seeds) >= 6 and len(design.dims) == 3
    # every uniform design over the same candidates that reaches the target costs at least as much
    for n in range(6, 200):
        for dims in ([50, 100, 200], [100, 200, 300], [50, 150, 300]):
            if extrapolation_se(dims, [n] * 3, spread) <= 0.004:
                assert sum(n * cost(d) for d in dims) >= design.cpu_seconds - max(cost(d) for d in dims)
                break


def test_design_reports_the_best_it_can_when_the_budget_is_short():
    spread, cost = PowerLaw(0.05, 0.0), PowerLaw(1.0, 2.0)
    design = design_trend([50, 100, 200], spread, cost, target_se=1e-4, budget=200)
    assert not design.reaches_target
    assert design.cpu_seconds <= 200
    with pytest.raises(ValueError, match="no design fits"):
        design_trend([400, 800, 1600], spread, cost, target_se=1e-4, budget=10)


def test_design_needs_a_degree_of_freedom():
    with pytest.raises(ValueError, match="dof"):
        design_trend([50, 100], PowerLaw(1, 0), PowerLaw(1, 0), target_se=0.1, budget=10, n_dims=(2,))
