"""Population loss of paper 2 (``docs/paper2.md`` §3): links, the §3.2 sampler, Φ, closed forms, Price.

Monte-Carlo comparisons use tolerances of 5 standard errors computed from
the same draws, never guessed constants.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper2 import population as pop
from aimrepro.paper2.losses import LINK_NAMES, MSELoss, make_link
from aimrepro.paper2.matrices import DenseMatrix, FactoredMatrix, trace_products

SMOOTH_LINKS = ("linear", "h2", "h3", "softmax")
#: A generic law: nonzero means (untied), Ω ≠ Ψ (skew parts), correlated indices.
GENERIC = dict(mean=[0.3, -0.2], Omega=[[1.3, 0.5], [0.5, 1.1]], Psi=[[0.4, 0.2], [0.2, 0.6]])
Q = np.array([[1.3, 0.5], [0.5, 1.1]])


def mse(name: str, prefactor: float = 0.5, beta: float = 1.0) -> MSELoss:
    return MSELoss(make_link(name, beta=beta), make_link(name, beta=beta), prefactor)


def generic_law(T: int) -> pop.IndexLaw:
    return pop.IndexLaw(T, **GENERIC)


# --- links -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["linear", "h2", "h3", "softmax"])
def test_link_derivatives_match_finite_differences(name):
    link = make_link(name, beta=1.7)
    rng = np.random.default_rng(1)
    G = rng.standard_normal((4, 3, 3))
    r = rng.standard_normal((4, 3, 3))
    eps = 1e-6
    # vjp: directional derivative of <r, F(G)> along a random direction E
    E = rng.standard_normal(G.shape)
    fd = (np.sum(r * link.apply(G + eps * E)) - np.sum(r * link.apply(G - eps * E))) / (2 * eps)
    assert np.sum(link.vjp(G, r) * E) == pytest.approx(fd, rel=1e-7)
    # hessian_dot: derivative of the vjp along E
    fd2 = (link.vjp(G + eps * E, r) - link.vjp(G - eps * E, r)) / (2 * eps)
    H = link.hessian_dot(G, r)
    analytic = H * E if link.elementwise else np.einsum("...ajk,...ak->...aj", H, E)
    np.testing.assert_allclose(analytic, fd2, rtol=1e-6, atol=1e-8)


def test_hermite_links_are_orthonormal():
    x, w = np.polynomial.hermite_e.hermegauss(20)
    w = w / math.sqrt(2 * math.pi)
    values = np.stack([make_link(f"h{k}").apply(x) for k in (1, 2, 3)])
    np.testing.assert_allclose((values * w) @ values.T, np.eye(3), atol=1e-12)


def test_hardmax_has_no_gradient_and_bad_links_are_named():
    with pytest.raises(ValueError, match="piecewise constant"):
        make_link("hardmax").vjp(np.zeros((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="link must be one of"):
        make_link("relu")
    with pytest.raises(ValueError, match="both be elementwise or both row-wise"):
        MSELoss(make_link("h2"), make_link("softmax"))
    assert set(LINK_NAMES) >= {"softmax", "hardmax", "h1", "h2", "h3", "linear"}


# --- the §3.2 sampler ---------------------------------------------------------------------


def _analytic_cov(law: pop.IndexLaw) -> tuple[np.ndarray, np.ndarray]:
    """Mean (K, T, T) and covariance ((K T T) × (K T T)) of [P eq. 4] with 𝒞 = I."""
    T, K = law.T, law.K
    eye = np.eye(T)
    mean = law.mean[:, None, None] * eye
    cov = (np.einsum("kl,ac,bd->kablcd", law.Omega, eye, eye)
           + np.einsum("kl,ad,bc->kablcd", law.Psi, eye, eye))
    return mean, cov.reshape(K * T * T, K * T * T)


def test_sampler_matches_direct_sampling_of_tokens():
    """Means and all 324 covariances of (student, teacher) indices, T = 3, d = 150 (§3.2)."""
    d, T, n = 150, 3, 20_000
    rng = np.random.default_rng(7)
    # A non-symmetric student with a trace (uncentered index, mean O(1)) and a teacher
    # sharing part of its left factor, so that student and teacher are correlated.
    L, R, R2 = (rng.standard_normal((d, 75)) / math.sqrt(d) for _ in range(3))
    student = FactoredMatrix(L, R, 1.0, 0.8 / math.sqrt(d))
    teacher = FactoredMatrix(L + 0.5 * R2, R2, 1.0)
    trace, Psi, Omega = trace_products([student, teacher])
    law = pop.IndexLaw(T, math.sqrt(d) * trace, Omega, Psi)
    X = rng.standard_normal((n, T, d))
    tokens = np.stack([m.indices(X, centered=False) for m in (student, teacher)], axis=1)
    draws = law.sample(n, rng)
    mean, cov = _analytic_cov(law)
    for sample in (tokens, draws):
        flat = sample.reshape(n, -1)
        sd = np.sqrt(np.diag(cov))
        assert np.all(np.abs(flat.mean(axis=0) - mean.ravel()) < 5 * sd / math.sqrt(n))
        emp = np.cov(flat, rowvar=False)
        se = np.sqrt((np.outer(sd, sd) ** 2 + cov ** 2) / n)
        assert np.all(np.abs(emp - cov) < 5 * se + 1e-12)


def test_sampler_of_symmetric_matrices_has_equal_transposed_entries():
    G = pop.IndexLaw.symmetric(Q, 3).sample(10, np.random.default_rng(0))
    np.testing.assert_array_equal(G, np.swapaxes(G, -1, -2))


def test_psd_projection_clips_negative_directions():
    A = np.array([[1.0, 2.0], [2.0, 1.0]])           # eigenvalues 3, -1
    root = pop.psd_sqrt(A)
    np.testing.assert_allclose(root @ root, [[1.5, 1.5], [1.5, 1.5]], atol=1e-12)


def test_law_checks_its_arguments():
    with pytest.raises(ValueError, match="Omega and Psi must be"):
        pop.IndexLaw(2, [0.0, 0.0], np.eye(3), np.eye(2))
    with pytest.raises(ValueError, match="T must be an integer >= 1"):
        pop.IndexLaw(0, [0.0], [[1.0]], [[1.0]])


# --- closed forms against Monte Carlo ---------------------------------------------------


def _mc(loss: MSELoss, law: pop.IndexLaw, n: int = 400_000, seed: int = 3) -> tuple[float, float]:
    values = loss.value(law.sample(n, np.random.default_rng(seed)))
    return float(values.mean()), float(values.std() / math.sqrt(n))


@pytest.mark.parametrize("T", [1, 2, 3])
def test_linear_closed_form_against_monte_carlo(T):
    law = generic_law(T)
    mean, se = _mc(mse("linear"), law)
    assert abs(pop.phi_linear(law) - mean) < 5 * se
    # symmetric S, c = 1: T(T + 1) Tr((S₁ − S₂)²)/d (docs/paper2.md §3.3: 8.40 at T = 2, 16.80 at T = 3)
    sym = pop.IndexLaw.symmetric(Q, T)
    assert pop.phi_linear(sym, prefactor=1.0) == pytest.approx(T * (T + 1) * 1.4, rel=1e-14)


@pytest.mark.parametrize("T", [1, 2, 3])
def test_h2_closed_form_against_monte_carlo(T):
    law = pop.IndexLaw(T, [0.0, 0.0], GENERIC["Omega"], GENERIC["Psi"])
    mean, se = _mc(mse("h2"), law)
    assert abs(pop.phi_h2(law) - mean) < 5 * se
    with pytest.raises(ValueError, match="centered"):
        pop.phi_h2(generic_law(T))


def test_hardmax_closed_form_against_monte_carlo_and_arccos():
    law = generic_law(2)
    mean, se = _mc(mse("hardmax"), law)
    assert abs(pop.phi_hardmax_t2(law) - mean) < 5 * se
    sym = pop.IndexLaw.symmetric(Q, 2)
    cosine = Q[0, 1] / math.sqrt(Q[0, 0] * Q[1, 1])
    assert pop.phi_hardmax_t2(sym) == pytest.approx(2 / math.pi * math.acos(cosine), rel=1e-12)


@pytest.mark.parametrize("beta", [1.0, 2.5])
def test_softmax_closed_form_against_monte_carlo(beta):
    law = generic_law(2)
    mean, se = _mc(mse("softmax", beta=beta), law)
    assert abs(pop.phi_softmax_t2(law, beta=beta) - mean) < 5 * se


# --- the Potential: quadrature, Monte Carlo, Price -------------------------------------------


@pytest.mark.parametrize(("name", "T", "closed"), [
    ("linear", 1, pop.phi_linear), ("linear", 3, pop.phi_linear),
    ("softmax", 2, pop.phi_softmax_t2), ("hardmax", 2, pop.phi_hardmax_t2)])
def test_quadrature_potential_equals_the_closed_forms(name, T, closed):
    law = generic_law(T)
    assert pop.Potential(mse(name), T).evaluate(law, gradient=False).value == pytest.approx(
        closed(law), rel=1e-12)


@pytest.mark.parametrize("T", [1, 3])
def test_h3_quadrature_against_monte_carlo(T):
    law = generic_law(T)
    mean, se = _mc(mse("h3"), law)
    assert abs(pop.Potential(mse("h3"), T).evaluate(law).value - mean) < 5 * se


def _fd_gradient(potential: pop.Potential, law: pop.IndexLaw, step: float) -> pop.PotentialValue:
    value = potential.evaluate(law, gradient=False).value
    return pop._finite_difference_gradient(
        lambda lw: potential.evaluate(lw, gradient=False).value, law, value, step=step)


@pytest.mark.parametrize(("name", "T"), [(n, T) for n in ("linear", "h2", "h3") for T in (1, 2, 3)]
                         + [("softmax", 2)])
def test_price_gradients_equal_finite_differences_of_quadrature(name, T):
    """Γ by Price's theorem against central differences (symmetric convention)."""
    potential = pop.Potential(mse(name), T)
    law = generic_law(T)
    price = potential.evaluate(law)
    fd = _fd_gradient(potential, law, 1e-5)
    scale = max(1.0, np.max(np.abs(price.d_Omega)))
    for a, b in ((price.d_mean, fd.d_mean), (price.d_Omega, fd.d_Omega), (price.d_Psi, fd.d_Psi)):
        np.testing.assert_allclose(a, b, atol=1e-7 * scale)


def test_price_gradients_with_common_random_numbers_at_three_tokens():
    """Monte-Carlo route (T = 3 softmax): Price on the draws against differences of the CRN Φ."""
    potential = pop.Potential(mse("softmax"), 3, n_samples=20_000, seed=5)
    assert potential.method == "monte_carlo"
    law = generic_law(3)
    price = potential.evaluate(law)
    fd = _fd_gradient(potential, law, 1e-4)
    # Both are consistent estimators of the same gradient from 2e4 draws: agree to a few 1e-3.
    for a, b in ((price.d_mean, fd.d_mean), (price.d_Omega, fd.d_Omega), (price.d_Psi, fd.d_Psi)):
        np.testing.assert_allclose(a, b, atol=5e-3)
    # and the Monte-Carlo value is within its error of a 10x larger independent estimate
    mean, se = _mc(mse("softmax"), law, n=200_000, seed=11)
    assert abs(price.value - mean) < 5 * math.hypot(price.stderr, se)


def test_hardmax_gradient_is_the_arccos_derivative():
    q11, q12, q22 = 1.3, 0.5, 1.1
    gamma = pop.Potential(mse("hardmax"), 2).gamma(np.array([[q11, q12], [q12, q22]]))
    dphi_dq12 = -2 / math.pi / math.sqrt(q11 * q22 - q12 * q12)
    assert gamma[0, 1] == pytest.approx(0.5 * dphi_dq12, rel=1e-6)


def test_gamma_of_the_riccati_loss_is_the_papers():
    """ℒ = (G₁ − G₂)², L = 1: Γ₁₁ = 2, Γ₁₂ = −2 ([P App. D.3], docs/paper2.md §2.2)."""
    gamma = pop.Potential(mse("linear", prefactor=1.0), 1).gamma(Q)
    np.testing.assert_allclose(gamma, [[2.0, -2.0], [-2.0, 2.0]], atol=1e-12)


@pytest.mark.parametrize(("name", "T"), [("h1", 1), ("h2", 1), ("h3", 1), ("softmax", 2),
                                         ("softmax", 3)])
def test_cross_gradient_is_negative_at_the_tied_uninformative_point(name, T):
    """[P eq. 23]: −Γ₁₂ > 0 when q₁₂ = t₁t₂ > 0 (cosine ρ/(1 + ρ) = 1/3 for ρ = ½)."""
    q = np.array([[1.5, 0.5], [0.5, 1.5]]) / 3.0
    potential = pop.Potential(mse(name), T, n_samples=20_000)
    assert potential.gamma(q)[0, 1] < 0


def test_potential_checks_its_arguments():
    with pytest.raises(ValueError, match="T must be an integer >= 2"):
        pop.Potential(mse("softmax"), 1)
    with pytest.raises(ValueError, match="quadrature needs"):
        pop.Potential(mse("softmax"), 3, method="quadrature")
    with pytest.raises(ValueError, match="gradients of a hardmax potential"):
        pop.Potential(mse("hardmax"), 3, n_samples=100).evaluate(generic_law(3))


def test_dense_and_factored_trace_products_agree():
    rng = np.random.default_rng(2)
    d = 30
    A = FactoredMatrix(rng.standard_normal((d, 7)), rng.standard_normal((d, 7)), 0.7, 0.3)
    B = FactoredMatrix(rng.standard_normal((d, 5)), None, 1.3, -0.2)
    C = DenseMatrix(rng.standard_normal((d, d)))
    for pair in ((A, B), (A, C), (C, B), (C, C)):
        trace, Psi, Omega = trace_products(list(pair))
        dense = [m.dense() for m in pair]
        np.testing.assert_allclose(trace, [np.trace(m) / d for m in dense], rtol=1e-12)
        np.testing.assert_allclose(Psi, [[np.trace(a @ b) / d for b in dense] for a in dense],
                                   rtol=1e-10)
        np.testing.assert_allclose(Omega, [[np.trace(a @ b.T) / d for b in dense] for a in dense],
                                   rtol=1e-10)


def test_factored_indices_equal_dense_indices():
    rng = np.random.default_rng(3)
    d = 25
    X = rng.standard_normal((6, 3, d))
    for matrix in (FactoredMatrix(rng.standard_normal((d, 4)), rng.standard_normal((d, 4)), 0.6,
                                  0.2),
                   FactoredMatrix(rng.standard_normal((d, 5)), None, 1.1)):
        dense = DenseMatrix(matrix.dense())
        for centered in (True, False):
            np.testing.assert_allclose(matrix.indices(X, centered=centered),
                                       dense.indices(X, centered=centered), rtol=1e-12,
                                       atol=1e-12)
