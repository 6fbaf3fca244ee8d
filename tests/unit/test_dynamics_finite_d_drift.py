"""The exact finite-d drift of tied SGD (``aimrepro.paper2.finite_d_drift``), checked by
exact Gauss–Hermite quadrature over the tokens at small d."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special

from aimrepro.paper2 import finite_d_drift as fdd
from aimrepro.paper2 import flows
from aimrepro.paper2 import sgd
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import FactoredMatrix
from aimrepro.paper2.population import Potential
from aimrepro.model import hermite_link


def _gauss_hermite(d: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Tensor Gauss–Hermite rule for N(0, I_d): exact for polynomials of degree < 2n per axis."""
    x, w = special.roots_hermitenorm(n)
    w = w / math.sqrt(2 * math.pi)
    nodes = np.array(list(itertools.product(x, repeat=d)))
    weights = np.array([math.prod(c) for c in itertools.product(w, repeat=d)])
    return nodes, weights


def _form(x, A):
    return np.einsum("ni,ij,nj->n", x, A, x) - np.trace(A)


def test_quadratic_form_moments_are_exact():
    rng = np.random.default_rng(1)
    d = 3
    mats = []
    for _ in range(3):
        M = rng.standard_normal((d, d))
        mats.append(0.5 * (M + M.T))

    def trace(seq):
        product = np.eye(d)
        for i in seq:
            product = product @ mats[i]
        return float(np.trace(product))

    moments = fdd.quadratic_form_moments(trace, 3, (4, 2, 1), max_degree=5)
    x, w = _gauss_hermite(d, 8)
    Q = [_form(x, A) for A in mats]
    for e, value in moments.items():
        direct = float(w @ (Q[0] ** e[0] * Q[1] ** e[1] * Q[2] ** e[2]))
        assert value == pytest.approx(direct, rel=1e-9, abs=1e-9), e
    assert max(sum(e) for e in moments) == 5
    gaussian = fdd.quadratic_form_moments(trace, 3, (4, 2, 1), max_cumulant=2)
    cov = np.array([[2 * trace((i, j)) for j in range(3)] for i in range(3)])
    assert gaussian[(2, 0, 0)] == pytest.approx(cov[0, 0])
    assert gaussian[(4, 0, 0)] == pytest.approx(3 * cov[0, 0] ** 2)      # Isserlis
    assert gaussian[(1, 1, 0)] == pytest.approx(cov[0, 1])
    assert gaussian[(3, 0, 0)] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("link", ["h1", "h2", "h3"])
def test_tied_drift_is_the_exact_expected_sgd_increment(link):
    """Against exact quadrature of E_x[−∇ℒ] projected on (t₁, q₁₂, q₁₁, p₁₂) at d = 3."""
    rng = np.random.default_rng(2)
    d = 3
    W = rng.standard_normal((d, 2)) / 2
    L = rng.standard_normal((d, 2)) / 2
    teacher = FactoredMatrix(L, None, 1.0, 0.2)
    loss = MSELoss(make_link(link), make_link(link))
    drift = fdd.tied_drift(W, teacher, loss)
    S1, S2 = W @ W.T, teacher.dense()
    x, w = _gauss_hermite(d, 10)
    k = loss.student.hermite_order
    G1, G2 = _form(x, S1) / math.sqrt(d), _form(x, S2) / math.sqrt(d)
    ell = 2 * loss.prefactor * (hermite_link(G1, k) - hermite_link(G2, k)) * loss.student.jacobian(G1)
    H12 = _form(x, (S1 @ S2 + S2 @ S1) / 2) / math.sqrt(d)
    H11 = _form(x, S1 @ S1) / math.sqrt(d)
    t2 = np.trace(S2) / d
    expected = {"t1": -(w @ (ell * G1)), "q12": -(w @ (ell * H12)), "q11": -2 * (w @ (ell * H11))}
    expected["p12"] = expected["q12"] - t2 * expected["t1"]
    for name, value in expected.items():
        assert drift.exact[name] == pytest.approx(value, rel=1e-8, abs=1e-10), name
    if link == "h1":   # quadratic loss: Wick makes the Gaussian drift exact at every d
        assert drift.excess == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("link", ["h2", "h3"])
def test_gaussian_part_of_the_drift_is_the_matrix_flow_velocity(link):
    spec = sgd.ProblemSpec("tied", link, 1, 30, rho=0.5, normalisation="unit_variance")
    student, teacher, _ = sgd.initial_problem(spec, 0)
    W = student.W
    drift = fdd.tied_drift(W, teacher, spec.loss())
    params = flows.TiedFlowParams(teacher, Potential(spec.loss(), 1), W.shape)
    dW = flows.tied_flow_rhs(0.0, W.ravel(), params).reshape(W.shape)
    dS = dW @ W.T + W @ dW.T
    d, S2 = W.shape[0], teacher.dense()
    assert drift.gaussian["q12"] == pytest.approx(np.sum(dS * S2) / d, rel=1e-10)
    assert drift.gaussian["t1"] == pytest.approx(np.trace(dS) / d, rel=1e-10)
    assert drift.gaussian["q11"] == pytest.approx(2 * np.sum(dS * (W @ W.T)) / d, rel=1e-10)
    assert abs(drift.excess) > 1e-3      # h2, h3 indices are not Gaussian at d = 30


def test_tied_drift_rejects_row_wise_links():
    W = np.eye(3)
    with pytest.raises(ValueError, match="polynomial elementwise"):
        fdd.tied_drift(W, FactoredMatrix(W), MSELoss(make_link("softmax"), make_link("softmax")))
    with pytest.raises(ValueError, match="polynomial links"):
        fdd.link_polynomial(4)


@pytest.mark.parametrize("link", ["h1", "h2", "h3"])
def test_expected_gradient_is_the_exact_mean_of_the_sgd_gradient(link):
    rng = np.random.default_rng(2)
    d = 3
    W = rng.standard_normal((d, 2)) / 2
    S2 = FactoredMatrix(rng.standard_normal((d, 2)) / 2, None, 1.0, 0.2).dense()
    loss = MSELoss(make_link(link), make_link(link))
    gradient = fdd.expected_gradient(W, S2, loss)
    x, w = _gauss_hermite(d, 10)
    S1 = W @ W.T
    G1, G2 = _form(x, S1) / math.sqrt(d), _form(x, S2) / math.sqrt(d)
    k = loss.student.hermite_order
    ell = 2 * loss.prefactor * (hermite_link(G1, k) - hermite_link(G2, k)) * loss.student.jacobian(G1)
    direct = 2 / math.sqrt(d) * (np.einsum("n,ni,nj,jr->ir", w * ell, x, x, W)
                                  - np.sum(w * ell) * W)
    np.testing.assert_allclose(gradient, direct, rtol=1e-9, atol=1e-12 * np.abs(direct).max())


def test_finite_d_flow_velocity_projects_on_the_exact_drift():
    spec = sgd.ProblemSpec("tied", "h3", 1, 24, rho=0.5, normalisation="unit_variance")
    student, teacher, _ = sgd.initial_problem(spec, 0)
    W, S2, d = student.W, teacher.dense(), 24
    params = fdd.FiniteDFlowParams(S2, spec.loss(), W.shape)
    dW = fdd.finite_d_flow_rhs(0.0, W.ravel(), params).reshape(W.shape)
    dS = dW @ W.T + W @ dW.T
    drift = fdd.tied_drift(W, teacher, spec.loss())
    assert np.sum(dS * S2) / d == pytest.approx(drift.exact["q12"], rel=1e-10)
    assert np.trace(dS) / d == pytest.approx(drift.exact["t1"], rel=1e-10)
    # p12 is a small difference of fast-moving q12 and t1 t2 at d = 24: a short step
    run = fdd.solve_finite_d_flow(W, teacher, spec.loss(), [0.0, 1e-6], rtol=1e-12, atol=1e-15)
    assert (run.p12[1] - run.p12[0]) / 1e-6 == pytest.approx(drift.exact["p12"], rel=1e-2)
