"""Initial velocities of weak recovery: [P eqs. 17, 23, 42, 356] (``docs/paper2.md`` §5.1, §5.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper2 import flows
from aimrepro.paper2.untied import dichotomy
from aimrepro.paper2.untied import fast
from aimrepro.paper2.untied import slow
from aimrepro.paper2 import initial_velocity as iv, sgd
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import FactoredMatrix, trace_products
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.trajectory import OrderParameters


def _potential(link, T=1, prefactor=0.5):
    return Potential(MSELoss(make_link(link), make_link(link), prefactor), T)


@pytest.mark.parametrize(("link", "T"), [("h1", 1), ("h2", 1), ("h3", 1), ("h2", 2), ("h3", 3),
                                         ("linear", 2), ("softmax", 2)])
@pytest.mark.parametrize("rho", [0.2, 1.0 / 3.0, 0.7])
def test_mehler_series_is_minus_gamma12_with_non_negative_coefficients(link, T, rho):
    """[P eq. 23]: −Γ₁₂ = Σ cₙ ρⁿ, cₙ ≥ 0, so Γ₁₂ < 0 at ρ > 0 (q₁₁ = q₂₂)."""
    series = iv.cross_gradient_series(link, T, 0.5, rho)
    assert np.all(series.coefficients >= -1e-12)
    assert series.series == pytest.approx(series.minus_gamma12, rel=1e-9)
    assert series.sign == -1


def test_mehler_coefficients_of_the_hermite_links_are_the_closed_forms():
    # h_k' = √k He_{k−1}/√((k−1)!): at T = 1 and variance 2q = 1 the only
    # coefficient is c_{k−1} = (k−1)! · k/(k−1)! = k
    for k, link in ((1, "h1"), (2, "h2"), (3, "h3")):
        series = iv.cross_gradient_series(link, 1, 0.5, 0.3, n_terms=6)
        expected = np.zeros(6)
        expected[k - 1] = k
        np.testing.assert_allclose(series.coefficients, expected, atol=1e-12)


def test_hardmax_series_vanishes_but_the_closed_form_gradient_is_negative():
    """∇F = 0 a.e.: the Hermite form of [P eq. 23] is 0, while Φ = (2/π) arccos gives Γ₁₂ < 0."""
    series = iv.cross_gradient_series("hardmax", 2, 1.0, 1.0 / 3.0)
    assert np.all(series.coefficients == 0.0) and series.series == 0.0
    # ½ ∂/∂q₁₂ of (2/π) arccos(q₁₂/q) at q = 1
    assert series.minus_gamma12 == pytest.approx(1.0 / (math.pi * math.sqrt(1 - 1.0 / 9)),
                                                 rel=1e-6)


def test_sign_table_shows_where_q11_equal_q22_matters():
    """h₃, T = 1: −Γ₁₂ = (3/2)[(2q₁₁ − 1)(2q₂₂ − 1) + 2(2q₁₂)²] (ours) flips sign."""
    table = iv.cross_gradient_sign_table(["h1", "h2", "h3", "softmax", "hardmax"],
                                         q11_values=(0.25, 0.5, 1.0), q22=1.0,
                                         rho_values=(1.0 / 3.0,))
    for i, link in enumerate(table["link"]):
        q11, q22, rho = table["q11"][i], table["q22"][i], table["rho"][i]
        if link == "h3":
            q12 = rho * math.sqrt(q11 * q22)
            expected = -1.5 * ((2 * q11 - 1) * (2 * q22 - 1) + 2 * (2 * q12) ** 2)
            assert table["gamma12"][i] == pytest.approx(expected, rel=1e-9)
        else:
            assert table["sign"][i] == -1
        if q11 == q22 and link != "hardmax":
            assert table["series"][i] == pytest.approx(-table["gamma12"][i], rel=1e-9)
    h3 = table["link"] == "h3"
    assert table["sign"][h3 & (table["q11"] == 0.25)] == 1     # variances 0.5 and 2
    with pytest.raises(ValueError, match="rho must be"):
        iv.cross_gradient_series("h2", 1, 0.5, 1.5)


def _tied_problem(link, d, seed=0):
    spec = sgd.ProblemSpec("tied", link, 1, d, rho=0.5, normalisation="unit_variance")
    student, teacher, _ = sgd.initial_problem(spec, seed)
    return spec, student.W, teacher


@pytest.mark.parametrize("link", ["h2", "h3"])
def test_eq356_decomposes_the_matrix_flow_velocity_exactly(link):
    spec, W, teacher = _tied_problem(link, 40, seed=2)
    potential = Potential(spec.loss(), 1)
    terms = iv.tied_velocity_terms(potential, W, teacher)
    params = flows.TiedFlowParams(teacher, potential, W.shape)
    dW = flows.tied_flow_rhs(0.0, W.ravel(), params).reshape(W.shape)
    dS = dW @ W.T + W @ dW.T
    d = W.shape[0]
    t2 = teacher.trace() / d
    velocity = np.sum(dS * teacher.dense()) / d - t2 * np.trace(dS) / d
    assert terms.total == pytest.approx(velocity, rel=1e-10)
    op = OrderParameters(*trace_products([FactoredMatrix(W), teacher]))
    assert terms.eq17 == pytest.approx(iv.tied_initial_velocity(potential, op), rel=1e-12)
    assert terms.moments["p12"] == pytest.approx(op.p_Psi[0, 1], abs=1e-12)


def test_eq17_is_the_flow_velocity_when_assumption_3_holds_exactly():
    """Traceless parts on orthogonal blocks: p₁₂ = μ̊₁₁₂ = μ̊₁₂₂ = 0 at finite d."""
    rng = np.random.default_rng(5)
    d, h = 24, 12
    A = rng.standard_normal((h, h))
    A = A @ A.T / h
    A -= np.trace(A) / h * np.eye(h)              # traceless on block 1
    B = rng.standard_normal((h, 4))
    S2_block = B @ B.T / 4
    S2_block -= np.trace(S2_block) / h * np.eye(h)
    S1 = 2.0 * np.eye(d)
    S1[:h, :h] += A
    lam, V = np.linalg.eigh(S1)
    W = V * np.sqrt(lam)
    S2 = 2.0 * np.eye(d)                          # 2 I + traceless block 2, as L Lᵀ + 0.5 I
    S2[h:, h:] += S2_block
    lam2, V2 = np.linalg.eigh(S2 - 0.5 * np.eye(d))
    teacher = FactoredMatrix(V2 * np.sqrt(lam2), None, 1.0, 0.5)
    potential = _potential("h2")
    terms = iv.tied_velocity_terms(potential, W, teacher)
    assert abs(terms.moments["p12"]) < 1e-12
    assert abs(terms.moments["c112"]) < 1e-12 and abs(terms.moments["c122"]) < 1e-12
    assert terms.total == pytest.approx(terms.eq17, rel=1e-10)


def _untied(link, d, m2, seed):
    spec = sgd.ProblemSpec("untied", link, 1, d, rho=1.0, student_rho=1.0, teacher_mean=m2,
                           init_scale=1.0, init_scale_v=0.9, normalisation="unit_variance")
    student, teacher, _ = sgd.initial_problem(spec, seed)
    potential = Potential(spec.loss(), 1)
    state = slow.untied_state(student.U, student.V, teacher)
    m_star = fast.fast_fixed_point(fast.MeanLandscape.at(potential, state), 0.3).m_star
    return student, teacher, potential, state, m_star


def test_eq42_gradient_is_the_finite_difference_of_phi():
    _, _, potential, state, m_star = _untied("h2", 60, 1.5, 0)
    velocity = iv.untied_initial_velocity(potential, state, m_star)
    eps = 1e-6
    for r, name in enumerate(("q1", "q2")):
        values = []
        for sign in (1, -1):
            q = {"q1": state.q1.copy(), "q2": state.q2.copy()}
            q[name][0, 1] += sign * eps
            q[name][1, 0] += sign * eps
            law = IndexLaw.untied([m_star, state.mean[1]], q["q1"], q["q2"], 1)
            values.append(potential.evaluate(law, gradient=False).value)
        # moving both (1, 2) and (2, 1) changes Φ by 2 [∇Φ]₁₂ ε (symmetric convention)
        assert velocity.gradient[r] == pytest.approx((values[0] - values[1]) / (4 * eps),
                                                     rel=1e-6)
    rate = state.tA + state.tB
    v2 = state.q1[1, 1] + state.q2[1, 1]
    crit = dichotomy.dichotomy(potential, state, m_star)
    assert velocity.symmetric / v2 == pytest.approx(crit.slope, rel=1e-10)
    assert velocity.rate == pytest.approx(rate)


@pytest.mark.parametrize(("link", "m2"), [("h2", 1.5), ("h1", 0.5)])
def test_eq42_is_the_slow_flow_velocity_at_a_free_start_as_d_grows(link, m2):
    """The slaved flow's dq₁₂/dτ at the SGD start approaches [P eq. 42] (freeness, O(d^-1/2))."""
    errors = {}
    for d in (60, 240):
        rel = []
        for seed in range(3):
            student, teacher, potential, state, m_star = _untied(link, d, m2, seed)
            velocity = iv.untied_initial_velocity(potential, state, m_star).velocity
            params = slow.UntiedFlowParams(teacher, potential, student.U.shape, m_star)
            y = np.concatenate([student.U.ravel(), student.V.ravel()])
            f = slow.slow_flow_rhs(0.0, y, params)
            eps = 1e-6

            def q12(z):
                s = slow.untied_state(*slow._split(z, student.U.shape), teacher)
                return np.array([s.q1[0, 1], s.q2[0, 1]])

            measured = (q12(y + eps * f) - q12(y - eps * f)) / (2 * eps)
            rel.append(np.max(np.abs(measured - velocity)) / np.max(np.abs(velocity)))
        errors[d] = float(np.mean(rel))
    assert errors[240] < 0.05
    assert errors[240] < errors[60]
    with pytest.raises(ValueError, match="m_star must be finite"):
        iv.untied_initial_velocity(potential, state, math.nan)
