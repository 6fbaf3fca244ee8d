"""Random-matrix part (docs/paper1.md §3.2): law of S + √Δ Z, mmse(Δ), RIE."""

import math

import numpy as np
import pytest

from aimrepro.paper1 import spectra

# (ρ, Δ) pairs covering one bulk, two bulks, nearly touching bulks, ρ ≥ 1 and large noise
CASES = [(0.5, 0.3), (0.2, 0.01), (2.0, 1.0), (0.05, 1e-6), (0.5, 1e-8), (0.9, 1e-4),
         (5.0, 0.01), (0.5, 1e4), (0.1, 0.5), (1.0, 1e-3)]


@pytest.mark.parametrize("rho,delta", CASES)
def test_density_moments(rho, delta):
    """Mass 1, mean √ρ (= Tr S/d) and second moment Q0 + Δ = 1 + ρ + Δ (§1.6)."""
    law = spectra.Spectrum(rho, delta)
    mass = law.integrate(np.ones_like)
    mean = law.integrate(lambda x: x)
    second = law.integrate(lambda x: x * x)
    assert mass == pytest.approx(1.0, abs=1e-10)
    assert mean == pytest.approx(math.sqrt(rho), abs=1e-10)
    assert second == pytest.approx(1.0 + rho + delta, rel=1e-10)


def test_support_counts_bulks():
    """ρ < 1 with small noise: the rank-deficiency atom becomes its own bulk."""
    assert len(spectra.Spectrum(0.2, 0.01).support()) == 2
    assert len(spectra.Spectrum(0.2, 2.0).support()) == 1
    assert len(spectra.Spectrum(2.0, 0.01).support()) == 1
    a, b = spectra.Spectrum(0.5, 1e-8).support()[1]
    # noiseless edges of √ρ·Marchenko–Pastur: (1 ∓ √ρ)²/√ρ
    assert a == pytest.approx((1 - math.sqrt(0.5)) ** 2 / math.sqrt(0.5), abs=1e-6)
    assert b == pytest.approx((1 + math.sqrt(0.5)) ** 2 / math.sqrt(0.5), abs=1e-6)


def test_density_vanishes_off_support_and_is_positive_inside():
    law = spectra.Spectrum(0.2, 0.01)
    (a1, b1), (a2, b2) = law.support()
    inside = np.array([(a1 + b1) / 2, (a2 + b2) / 2])
    outside = np.array([a1 - 0.1, (b1 + a2) / 2, b2 + 0.1])
    assert np.all(law.density(inside) > 0)
    assert np.all(law.density(outside) == 0)


def test_cubed_integral_and_mmse_value():
    """Scratch value of STYLE §2.2: ∫μ³ = 0.1107024931 at ρ = 0.5, Δ = 0.3, giving mmse = 0.16889."""
    law = spectra.Spectrum(0.5, 0.3)
    assert law.cubed_density_integral() == pytest.approx(0.1107024931, abs=1e-10)
    assert spectra.mmse(0.3, 0.5) == pytest.approx(0.168889, abs=1e-6)


@pytest.mark.parametrize("rho", [0.05, 0.1, 0.2, 0.5, 0.9, 1.0, 2.0, 5.0])
def test_quadrature_converged(rho):
    """Doubling the nodes moves mmse(Δ) by < 1e-10 over the range the SE visits."""
    deltas = np.geomspace(1e-6, 1e4, 41)
    coarse = spectra.mmse(deltas, rho, n_nodes=spectra.N_NODES)
    fine = spectra.mmse(deltas, rho, n_nodes=2 * spectra.N_NODES)
    assert np.max(np.abs(coarse - fine)) < 1e-10


@pytest.mark.parametrize("rho", [0.1, 0.5, 1.0, 2.0])
def test_mmse_monotone(rho):
    """mmse increases with Δ and mmse/Δ decreases (what makes the softmax SE root unique)."""
    deltas = np.geomspace(1e-6, 1e4, 200)
    m = spectra.mmse(deltas, rho)
    assert np.all(np.diff(m) > 0)
    assert np.all(np.diff(m / deltas) < 0)
    assert np.all((m > 0) & (m < 1))


@pytest.mark.parametrize("rho", [0.1, 0.5, 2.0])
def test_small_delta_limit(rho):
    """mmse(Δ) = Δ·min(2ρ − ρ², 1)(1 + O(Δ)) as Δ → 0 (ρ ≠ 1)."""
    for delta in (1e-6, 1e-8):
        ratio = spectra.mmse(delta, rho) / spectra.mmse_small_delta(delta, rho)
        assert abs(ratio - 1.0) < 50 * delta


def test_small_delta_limit_square_width():
    """At ρ = 1 the Marchenko–Pastur hard edge at 0 slows the approach to O(Δ^{2/3})."""
    for delta in (1e-6, 1e-8):
        ratio = spectra.mmse(delta, 1.0) / spectra.mmse_small_delta(delta, 1.0)
        assert 0 < 1.0 - ratio < 2.0 * delta ** (2 / 3)


@pytest.mark.parametrize("rho", [0.1, 0.5, 2.0])
def test_large_delta_limit(rho):
    """mmse(Δ) = Δ/(1+Δ) − 1/(ρΔ²) + O(1/Δ³) as Δ → ∞ (Wiener filter plus the κ₃² correction)."""
    for delta in (1e2, 1e3):
        wiener_gap = spectra.mmse(delta, rho) - delta / (1 + delta)
        assert wiener_gap == pytest.approx(-1.0 / (rho * delta**2), rel=10.0 / (rho * delta))
        gap = spectra.mmse(delta, rho) - spectra.mmse_large_delta(delta, rho)
        assert abs(gap) < 10.0 / (rho**2 * delta**3)


def test_mmse_rejects_delta_outside_validated_range():
    with pytest.raises(ValueError, match="delta must lie in"):
        spectra.mmse(1e-12, 0.5)
    with pytest.raises(ValueError, match="rho must be"):
        spectra.mmse(0.1, -1.0)


@pytest.mark.parametrize("rho,delta", [(0.5, 0.3), (0.2, 0.01), (2.0, 1.0), (0.1, 3.0)])
def test_mmse_equals_nishimori_form_of_rie(rho, delta):
    """Q0 − ∫ μ(x) ξ(x)² dx = mmse(Δ) with ξ(x) = x − 2Δ Re G(x) the RIE map.

    The RIE is the posterior mean, so E|Ŝ|²/d = q and the error is Q0 − q.  This ties
    the Hilbert transform (Re G) to the ∫μ³ formula, which are computed independently.
    """
    law = spectra.Spectrum(rho, delta)
    q = law.integrate(lambda x: spectra.rie_shrink(x, delta, rho) ** 2)
    assert 1.0 + rho - q == pytest.approx(spectra.mmse(delta, rho), abs=1e-9)


def test_second_moment_grows_with_noise_at_unit_rate():
    """d/dΔ E_μ[x²] = 1: the noise adds variance Δ per unit, by finite differences."""
    d0, h = 0.3, 1e-4
    plus = spectra.Spectrum(0.5, d0 + h).integrate(lambda x: x * x)
    minus = spectra.Spectrum(0.5, d0 - h).integrate(lambda x: x * x)
    assert (plus - minus) / (2 * h) == pytest.approx(1.0, abs=1e-8)


def test_stieltjes_branch_and_continuity():
    """G ~ 1/z at infinity; Im G·Im z < 0; G continuous across every edge (no ε shift)."""
    law = spectra.Spectrum(0.2, 0.01)
    z = np.array([1e3 + 1.0j, -1e3 + 1.0j])
    g = law.stieltjes(z)
    assert np.allclose(g * z, 1.0, atol=1e-3)
    assert np.all(law.stieltjes(np.array([0.3 + 1e-2j, 2.0 - 1e-2j])).imag * np.array([1, -1]) < 0)
    for edge in np.ravel(law.support()):
        for eps in (1e-8, 1e-10):
            left, right = spectra.stieltjes_on_axis(np.array([edge - eps, edge + eps]), 0.01, 0.2)
            # square-root edge: the jump is O(√ε)
            assert abs(left - right) < 50 * math.sqrt(eps)


def test_stieltjes_matches_quadrature_off_support():
    """Off the support the physical real root equals ∫ μ(y)/(x − y) dy."""
    rho, delta = 0.2, 0.01
    law = spectra.Spectrum(rho, delta)
    (a1, b1), (a2, b2) = law.support()
    for x in (a1 - 0.3, 0.5 * (b1 + a2), b2 + 0.3, b2 + 10):
        direct = law.integrate(lambda y, x=x: 1.0 / (x - y))
        g = spectra.stieltjes_on_axis(np.array([x]), delta, rho)[0]
        assert g.imag == 0
        assert g.real == pytest.approx(direct, rel=1e-8)


def test_density_is_imaginary_part_over_pi():
    law = spectra.Spectrum(0.5, 0.3)
    x = np.linspace(-0.8, 4.2, 11)
    g = spectra.stieltjes_on_axis(x, 0.3, 0.5)
    assert np.allclose(g.imag / np.pi, law.density(x), atol=1e-13)


def _sample_observation(rng, d, rho, delta):
    r = int(round(rho * d))
    W = rng.standard_normal((d, r))
    S = W @ W.T / math.sqrt(r * d)
    G = rng.standard_normal((d, d))
    return S, S + math.sqrt(delta) * (G + G.T) / math.sqrt(2 * d)


def test_rie_reaches_mmse_on_samples():
    """RIE on seeded d = 400 samples: error within the seed spread of mmse(Δ) (§3.2 check)."""
    rho, delta, d = 0.5, 0.3, 400
    errors = []
    for seed in range(6):
        S, R = _sample_observation(np.random.default_rng(seed), d, rho, delta)
        errors.append(np.sum((spectra.rie_denoise(R, delta, rho) - S) ** 2) / d)
    errors = np.array(errors)
    spread = errors.std(ddof=1)
    # finite-d bias is O(1/d); allow it plus three standard errors of the mean
    assert abs(errors.mean() - spectra.mmse(delta, rho)) < 3 * spread / math.sqrt(errors.size) + 2.0 / d


def test_rie_beats_naive_estimators():
    rho, delta, d = 0.2, 0.5, 300
    S, R = _sample_observation(np.random.default_rng(7), d, rho, delta)
    err = lambda E: np.sum((E - S) ** 2) / d
    rie = err(spectra.rie_denoise(R, delta, rho))
    assert rie < err(R) and rie < err(math.sqrt(rho) * np.eye(d))


def test_rie_shrink_is_wiener_for_large_noise():
    """At large Δ the RIE map tends to the linear shrinkage √ρ + (λ − √ρ)/(1 + Δ)."""
    rho, delta = 0.5, 1e3
    lam = np.linspace(-40, 40, 7)
    expected = math.sqrt(rho) + (lam - math.sqrt(rho)) / (1 + delta)
    assert np.allclose(spectra.rie_shrink(lam, delta, rho), expected, atol=2e-3)
