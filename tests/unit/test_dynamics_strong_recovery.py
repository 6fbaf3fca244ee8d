"""Strong-recovery rates by linearisation at the teacher ([P App. D.5, F.4]; ours)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper2 import flows
from aimrepro.paper2.untied import slow
from aimrepro.paper2 import moments, sgd
from aimrepro.paper2 import strong_recovery as sr
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import FactoredMatrix
from aimrepro.paper2.population import Potential
from aimrepro.paper2.trajectory import OrderParameters


def _potential(link, prefactor=0.5):
    return Potential(MSELoss(make_link(link), make_link(link), prefactor), 1)


@pytest.mark.parametrize("variance", [0.5, 1.0, 2.0])
def test_curvature_at_the_teacher_is_the_closed_form(variance):
    # g = 2c E h'(G)², c = ½: h₁ → 1, h₂ → 2v, h₃ → (3/2)(3v² − 2v + 1)
    assert sr.optimum_curvature(_potential("h1"), variance=variance) == pytest.approx(1.0)
    assert sr.optimum_curvature(_potential("h2"), variance=variance) == pytest.approx(2 * variance)
    assert sr.optimum_curvature(_potential("h3"), variance=variance) == pytest.approx(
        1.5 * (3 * variance ** 2 - 2 * variance + 1))
    assert sr.optimum_curvature(_potential("h2", 1.0), variance=variance) == pytest.approx(
        4 * variance)
    with pytest.raises(ValueError, match="one token"):
        sr.optimum_curvature(Potential(MSELoss(make_link("h2"), make_link("h2")), 2),
                             variance=1.0)


def _teacher(d, eigenvalues, seed=0):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((d, len(eigenvalues))))
    return FactoredMatrix(Q * np.sqrt(eigenvalues), None, 1.0, 0.0)


def test_tied_rate_is_the_riccati_decay():
    """ℒ = (G₁ − G₂)² (g = 2): ‖S(t) − S*‖² decays at 2 g λ_min⁺ = 4 λ_min⁺ (App. D.3, D.5)."""
    d, eigenvalues = 16, np.array([0.4, 0.7, 1.0, 1.5, 2.0, 3.0])
    teacher = _teacher(d, eigenvalues)
    potential = _potential("linear", 1.0)
    rates = sr.tied_rates(potential, teacher, student_width=6)
    assert rates.g == pytest.approx(2.0)
    assert rates.lambda_min == pytest.approx(0.4)
    assert rates.loss_rate == pytest.approx(4 * 0.4) and not rates.algebraic
    rng = np.random.default_rng(1)
    W0 = rng.standard_normal((d, 6)) / 2
    times = np.linspace(0.0, 16.0, 33)
    run = flows.solve_tied_flow(W0, teacher, potential, times, rtol=1e-11, atol=1e-14)
    # the closed form agrees where it is accurate (its QR loses the slow directions once
    # e^{2λ_max t} exceeds 1/eps, t ≈ 6 here)
    S = moments.riccati_solution(W0, teacher, times[:9])
    q12 = np.array([np.sum(s * teacher.dense()) / d for s in S])
    np.testing.assert_allclose(q12, run.column("Psi12")[:9], rtol=1e-6)
    excess = sr.excess_loss(potential, run, kind="tied")
    fit = sr.late_time_rate(run.t_ode, excess, t_start=10.0)
    assert fit.rate == pytest.approx(rates.loss_rate, rel=0.01)
    # a student wider than the teacher's rank keeps null-null directions: flagged
    assert sr.tied_rates(_potential("linear", 1.0), teacher, student_width=8).algebraic
    with pytest.raises(ValueError, match="teacher rank"):
        sr.tied_rates(_potential("linear", 1.0), teacher, student_width=3)


@pytest.mark.parametrize("link", ["h2", "h3"])
def test_tied_matrix_flow_approaches_the_predicted_rate(link):
    d, eigenvalues = 12, np.array([0.3, 0.5, 0.8, 1.0])
    teacher = _teacher(d, eigenvalues, seed=3)
    potential = _potential(link)
    rates = sr.tied_rates(potential, teacher, student_width=4)
    rng = np.random.default_rng(4)
    W_star = teacher.left
    W0 = W_star + 0.05 * rng.standard_normal(W_star.shape)     # near the teacher
    times = np.linspace(0.0, 40.0 / rates.loss_rate, 81)
    run = flows.solve_tied_flow(W0, teacher, potential, times, rtol=1e-10, atol=1e-13)
    excess = sr.excess_loss(potential, run, kind="tied")
    fit = sr.late_time_rate(run.t_ode, excess, t_start=times[40], floor=1e-13)
    assert fit.rate == pytest.approx(rates.loss_rate, rel=0.03)


@pytest.mark.parametrize("link", ["h1", "h2", "h3"])
def test_direct_closed_ode_decays_at_four_g(link):
    potential = _potential(link)
    q_star, skew = 0.5, 0.2
    rates = sr.direct_rates(potential, q_star, skew=skew)
    assert rates.loss_rate == pytest.approx(4 * rates.g, rel=1e-6)
    start = OrderParameters([0.05, 0.0], [[q_star - skew + 0.05, q_star - 0.03],
                                          [q_star - 0.03, q_star]],
                            [[q_star + skew + 0.05, q_star - 0.03], [q_star - 0.03, q_star]])
    times = np.linspace(0.0, 8.0 / rates.g, 81)
    run = flows.solve_direct_ode(start, potential, times, d=100, rtol=1e-11, atol=1e-14)
    excess = sr.excess_loss(potential, run, kind="direct")
    fit = sr.late_time_rate(run.t_ode, excess, t_start=times[30], t_end=times[60], floor=1e-14)
    assert fit.rate == pytest.approx(rates.loss_rate, rel=0.02)


def test_untied_linearisation_is_exact_for_the_linear_link():
    """h₁: dM⁺/dτ = −g(EC + CE) + 2g Tr(EC)/Tr(C) C with E = M⁺ − M₂⁺, C = UUᵀ + VVᵀ, exactly."""
    rng = np.random.default_rng(6)
    d, r = 10, 10
    U, V = rng.standard_normal((d, r)) / math.sqrt(d), rng.standard_normal((d, r)) / math.sqrt(d)
    Ut, Vt = rng.standard_normal((d, r)) / math.sqrt(d), rng.standard_normal((d, r)) / math.sqrt(d)
    m2 = 0.3
    teacher = FactoredMatrix(Ut, Vt, 1.0, m2 / math.sqrt(d) - float(np.sum(Ut * Vt)) / d)
    potential = _potential("h1")
    g = sr.optimum_curvature(potential, variance=1.0, mean=m2)
    params = slow.UntiedFlowParams(teacher, potential, (d, r), mean_start=m2)
    y = np.concatenate([U.ravel(), V.ravel()])
    dU, dV = slow._split(slow.slow_flow_rhs(0.0, y, params), (d, r))
    dM = dU @ V.T + U @ dV.T
    M2 = teacher.dense()
    E = (U @ V.T + V @ U.T) - (M2 + M2.T)
    C = U @ U.T + V @ V.T
    predicted = -g * (E @ C + C @ E) + 2 * g * np.trace(E @ C) / np.trace(C) * C
    np.testing.assert_allclose(dM + dM.T, predicted, atol=1e-10)
    rates = sr.untied_rates(potential, U, V, teacher_mean=m2, teacher_variance=1.0)
    assert rates.c_min == pytest.approx(np.linalg.eigvalsh(C)[0])
    assert rates.loss_rate == pytest.approx(4 * g * rates.c_min)


def test_late_time_rate_fits_an_exponential_and_rejects_short_windows():
    t = np.linspace(0, 5, 51)
    fit = sr.late_time_rate(t, 3.0 * np.exp(-0.7 * t), t_start=1.0)
    assert fit.rate == pytest.approx(0.7, rel=1e-10) and fit.stderr < 1e-10
    with pytest.raises(ValueError, match="need >= 3 records"):
        sr.late_time_rate(t, np.exp(-t), t_start=1.0, floor=1.0)
    with pytest.raises(ValueError, match="kind must be"):
        sr.excess_loss(_potential("h1"), None, kind="other")
    spec = sgd.ProblemSpec("tied", "h2", 1, 20, rho=0.5, normalisation="unit_variance")
    student, teacher, _ = sgd.initial_problem(spec, 0)
    run = flows.solve_tied_flow(student.W, teacher, Potential(spec.loss(), 1), [0.0, 0.1])
    assert np.all(sr.excess_loss(Potential(spec.loss(), 1), run, kind="tied") > 0)


def test_mode_sum_decay_is_the_linear_flow():
    rng = np.random.default_rng(7)
    d = 6
    X = rng.standard_normal((d, d))
    C = X @ X.T / d
    E0 = rng.standard_normal((d, d))
    E0 = E0 + E0.T
    g, t = 1.3, 0.4
    # E(t) = e^{−gCt} E0 e^{−gCt}
    c, Q = np.linalg.eigh(C)
    K = Q @ np.diag(np.exp(-g * c * t)) @ Q.T
    Et = K @ E0 @ K
    assert sr.mode_sum_decay(E0, C, g, [0.0, t]) == pytest.approx(
        [1.0, np.sum(Et ** 2) / np.sum(E0 ** 2)], rel=1e-12)
    with pytest.raises(ValueError, match="nothing decays"):
        sr.mode_sum_decay(np.zeros((d, d)), C, g, [0.0])
