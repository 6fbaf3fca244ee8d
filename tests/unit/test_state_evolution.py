"""State evolution (docs/paper1.md §3–§4): fixed points, thresholds and limits."""

import math

import numpy as np
import pytest

from aimrepro.numerics import grids
from aimrepro.paper1 import thresholds
from aimrepro.paper1 import spectra
from aimrepro.paper1 import state_evolution as se
from aimrepro.paper1.channels import make_channel

SOFTMAX2 = make_channel("softmax", T=2)
HARDMAX = make_channel("hardmax", T=2)
HARDMAX_PAPER = make_channel("hardmax_paper", T=2)


def _mmse(points):
    return np.array([p.mmse for p in points])


@pytest.mark.parametrize("rho,expected", [(0.1, 0.0475), (0.2, 0.09), (0.3, 0.1275), (0.5, 0.1875),
                                          (1.0, 0.25), (2.0, 0.25)])
def test_alpha_pr_table_T2(rho, expected):
    """§4: α_PR(ρ, 2) = min(2ρ − ρ², 1)/4."""
    assert thresholds.alpha_perfect_recovery(rho, 2) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("T,expected", [(3, 0.075), (4, 0.75 / 18), (5, 0.75 / 28), (6, 0.01875)])
def test_alpha_pr_table_rho_half(T, expected):
    """§4 table (printed there as 0.075, 0.0417, 0.0268, 0.0188)."""
    assert thresholds.alpha_perfect_recovery(0.5, T) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("rho", [0.1, 0.5, 1.0, 2.0])
def test_softmax_se_vanishes_exactly_at_alpha_pr(rho):
    """The SE's own threshold is α_PR: MMSE > 0 just below it, = 0 from it on, and → 0 continuously."""
    apr = thresholds.alpha_perfect_recovery(rho, 2)
    below, close, at, above = se.se_curve(SOFTMAX2, [0.99 * apr, (1 - 1e-6) * apr, apr, 1.2 * apr], rho)
    assert below.mmse > 1e-4
    assert 0 < close.mmse < 1e-3
    assert at.mmse == 0.0 and above.mmse == 0.0
    # measured threshold: lim_{Δ→0} mmse(Δ)/(c Δ) from the spectral code, not the formula
    measured = spectra.mmse(1e-9, rho) / (4 * 1e-9)
    assert measured == pytest.approx(apr, rel=1e-5)  # O(Δ), or O(Δ^{2/3}) at ρ = 1


def test_softmax_curves_collapse_in_alpha_T():
    """§3.3: MMSE depends on (α, T) only through α(T² + T − 2)."""
    alpha_T = np.linspace(0.02, 0.74, 25)
    reference = _mmse(se.se_curve(SOFTMAX2, alpha_T / 4, 0.5))
    for T in (3, 4, 5, 6):
        curve = _mmse(se.se_curve(make_channel("softmax", T=T), alpha_T / (T * T + T - 2), 0.5))
        assert np.max(np.abs(curve - reference)) < 1e-12


def test_softmax_is_beta_independent():
    a = _mmse(se.se_curve(make_channel("softmax", T=3, beta=0.2), [0.02, 0.05], 0.5))
    b = _mmse(se.se_curve(make_channel("softmax", T=3, beta=5.0), [0.02, 0.05], 0.5))
    assert np.array_equal(a, b)


def test_softmax_rho_infinity_limit():
    """§4: MMSE → 1 − (T² + T − 2)α as ρ → ∞; the gap shrinks like 1/ρ."""
    alphas = np.linspace(0.01, 0.24, 12)
    line = se.softmax_mmse_rho_infinity(alphas, 2)
    gaps = [np.max(np.abs(_mmse(se.se_curve(SOFTMAX2, alphas, rho)) - line)) for rho in (1e2, 1e3, 1e4)]
    assert gaps[2] < 3e-5
    assert gaps[0] / gaps[1] > 5 and gaps[1] / gaps[2] > 5


def test_softmax_small_width_closed_form():
    """§4: ρ → 0 at fixed ᾱ: MMSE = 1 up to 1/c, c ᾱ(2 − c ᾱ) up to 2/c, then 0 (c = T² + T − 2)."""
    for T in (2, 3):
        c = T * T + T - 2
        abar = np.array([0.5, 0.99, 1.2, 1.5, 1.9]) / c
        expected = np.where(c * abar <= 1, 1.0, c * abar * (2 - c * abar))
        got = _mmse(se.small_width_curve(make_channel("softmax", T=T), abar))
        assert np.allclose(got, expected, atol=1e-9)


@pytest.mark.parametrize("channel,abars", [(SOFTMAX2, [0.1, 0.3, 0.4, 0.45]), (HARDMAX, [0.3, 0.6, 1.0, 2.0])])
def test_finite_width_approaches_small_width_limit(channel, abars):
    """STYLE §2.4: finite-ρ SE at α = ρ ᾱ converges to the ρ → 0 curve as ρ = 1e-1 → 1e-2 → 1e-3."""
    abars = np.array(abars)
    limit = _mmse(se.small_width_curve(channel, abars))
    gaps = [np.max(np.abs(_mmse(se.se_curve(channel, abars * rho, rho)) - limit)) for rho in (1e-1, 1e-2, 1e-3)]
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 0.02


def test_weak_recovery_thresholds():
    """§3.5: ᾱ_c = 0.40341 with the correct derivative, 0.56327 with the published formula (B1)."""
    assert se.weak_recovery_threshold(HARDMAX) == pytest.approx(0.40341, abs=1e-5)
    assert se.weak_recovery_threshold(HARDMAX_PAPER) == pytest.approx(0.56327, abs=1e-5)
    for channel in (HARDMAX, HARDMAX_PAPER):
        a_c = se.weak_recovery_threshold(channel)
        below, above = se.small_width_curve(channel, [0.98 * a_c, 1.05 * a_c])
        assert below.mmse == 1.0 and 0.9 < above.mmse < 1.0


def test_hardmax_has_no_perfect_recovery_and_decreases():
    """§4: the hardmax MMSE decreases with α and stays > 0."""
    alphas = np.geomspace(0.03, 10, 9)
    for channel in (HARDMAX, HARDMAX_PAPER):
        points = se.se_curve(channel, alphas, 0.5)
        m = _mmse(points)
        assert np.all(np.diff(m) < 0) and m[-1] > 0
        assert all(p.converged and p.residual < 1e-10 for p in points)


def test_correct_hardmax_beats_published_formula():
    """B1: the corrected channel gives a strictly smaller error at every α."""
    alphas = [0.1, 0.3, 1.0]
    assert np.all(_mmse(se.se_curve(HARDMAX, alphas, 0.5)) < _mmse(se.se_curve(HARDMAX_PAPER, alphas, 0.5)) - 0.05)


def test_root_finder_agrees_with_iteration_from_uninformative_point():
    """The bracketing solver returns the fixed point that the paper's iteration from q = ρ reaches.

    The undamped map is monotone, so the iterates increase to the first fixed point above ρ.
    """
    rho, alpha = 0.5, 0.3
    Q0 = 1 + rho
    q, previous = rho, -1.0
    while abs(q - previous) > 1e-13:
        previous = q
        q = Q0 - spectra.mmse(1 / HARDMAX.q_hat(q, Q0, alpha), rho)
        assert q >= previous - 1e-15
    point = se.solve_se(HARDMAX, alpha, rho)
    assert point.q == pytest.approx(q, abs=1e-9)
    assert point.mmse == pytest.approx(Q0 - point.q)
    assert point.q_hat == pytest.approx(HARDMAX.q_hat(point.q, Q0, alpha), rel=1e-12)


def test_softmax_solution_satisfies_fixed_point_and_reports_diagnostics():
    rho = 0.3
    alphas = np.linspace(1e-4, thresholds.alpha_perfect_recovery(rho, 2), 64)
    points = se.se_curve(SOFTMAX2, alphas, rho)
    assert all(p.converged for p in points)
    for p in points[:-1]:
        # v = mmse(v/(c α)) with c = 4 for T = 2
        assert p.mmse == pytest.approx(float(spectra.mmse(p.mmse / (4 * p.alpha), rho)), abs=1e-11)
        assert p.residual < 1e-11 and p.iterations < 60
    m = _mmse(points)
    assert np.all(np.diff(m) <= 0) and m[0] < 1 and m[-1] == 0


def test_softmax_tiny_alpha_uses_large_noise_form():
    """α so small that Δ = 1/q̂ exceeds the quadrature range: MMSE = 1 − cα + O((cα)²)."""
    point = se.solve_se(SOFTMAX2, 1e-9, 0.5)
    assert point.converged and point.mmse == pytest.approx(1 - 4e-9, abs=1e-15)


def test_order_of_alphas_does_not_matter():
    alphas = np.array([1.0, 0.1, 0.3])
    shuffled = _mmse(se.se_curve(HARDMAX, alphas, 0.5))
    ordered = _mmse(se.se_curve(HARDMAX, np.sort(alphas), 0.5))
    assert np.allclose(shuffled, ordered[[2, 0, 1]], atol=1e-11)


def test_se_table_dispatch():
    x = grids.grid_values("log", 0.1, 2.0, 3)
    limit = se.se_table("hardmax", 2, 0.0, "alphabar", x)
    assert np.all(np.isnan(limit.alpha)) and limit.diagnostics()["converged"]
    finite = se.se_table("hardmax", 2, 0.5, "alphabar", x)
    assert np.allclose(finite.alpha, 0.5 * x)
    inf_line = se.se_table("softmax", 2, math.inf, "alpha", np.array([0.0, 0.1, 0.3]))
    assert np.allclose(inf_line.mmse, [1.0, 0.6, 0.0])
    cols = finite.columns()
    assert list(cols) == ["alphabar", "alpha", "mmse", "q", "q_hat", "converged", "iterations", "residual"]
    with pytest.raises(ValueError, match="alphabar"):
        se.se_table("hardmax", 2, 0.0, "alpha", x)
    with pytest.raises(ValueError, match="softmax channel only"):
        se.se_table("hardmax", 2, math.inf, "alpha", x)


@pytest.mark.parametrize("kwargs,match", [({"alpha": -1.0, "rho": 0.5}, "alpha must be"),
                                          ({"alpha": 0.1, "rho": -1.0}, "rho must be"),
                                          ({"alpha": 0.1, "rho": math.nan}, "rho must be")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        se.solve_se(SOFTMAX2, **kwargs)
