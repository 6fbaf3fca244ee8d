"""Reference flows of paper 2 against SGD and against the paper's identities (``docs/paper2.md`` §2, §4.4)."""

from __future__ import annotations

import numpy as np
import pytest

from aimrepro.paper2 import flows
from aimrepro.paper2 import sgd
from aimrepro.paper2.matrices import FactoredMatrix, trace_products
from aimrepro.paper2.population import Potential
from aimrepro.paper2.trajectory import OrderParameters


def test_riccati_case_matches_sgd_at_d200():
    """§4.4 item 1: linear link, ℒ = (G₁ − G₂)², tied SGD against the Riccati matrix flow, 2 %."""
    spec = sgd.ProblemSpec("tied", "linear", 1, 200, rho=0.5, normalisation="aim",
                           loss_prefactor=1.0)
    settings = sgd.SGDSettings(lr=0.01, batch=512, horizon=0.2, n_records=5)
    student, teacher, _ = sgd.initial_problem(spec, 0)
    flow = flows.solve_tied_flow(student.W.copy(), teacher, Potential(spec.loss(), 1),
                                 np.linspace(0.0, 0.2, 5))
    run = sgd.SGDRun(spec, settings, 0).run()
    np.testing.assert_allclose(run.t_ode, flow.t_ode, rtol=1e-12)
    for name in ("t1", "Psi11", "Psi12"):
        np.testing.assert_allclose(run.column(name), flow.column(name), rtol=0.02)
    # the structural overlap grows from ~0 to ~0.5: compare it on the teacher's scale p22 = 1
    assert np.max(np.abs(run.p12 - flow.p12)) < 0.02
    assert flow.p12[-1] > 0.4


def test_direct_ode_matches_sgd_for_the_linear_link():
    spec = sgd.ProblemSpec("direct", "h1", 1, 80)
    settings = sgd.SGDSettings(lr=0.05, batch=256, horizon=1.0, n_records=6)
    student, teacher, _ = sgd.initial_problem(spec, 1)
    initial = OrderParameters(*trace_products([student.matrix(), teacher]))
    ode = flows.solve_direct_ode(initial, Potential(spec.loss(), 1), np.linspace(0, 1.0, 6), d=80)
    run = sgd.SGDRun(spec, settings, 1).run()
    assert np.max(np.abs(run.overlap_ratio - ode.overlap_ratio)) < 0.02
    assert ode.overlap_ratio[-1] > 0.5


@pytest.mark.parametrize(("link", "trapped"), [("h1", False), ("h2", True), ("h3", True)])
def test_uninformative_manifold_of_direct_s(link, trapped):
    """[P Cor. 7]: 𝒰 = {t₁ = Ψ₁₂ = Ω₁₂ = 0} is invariant when the cross-gradients vanish on it."""
    q22 = 0.5                                           # unit-variance symmetric teacher
    initial = OrderParameters([0.0, 0.3], [[0.0, 0.0], [0.0, q22]], [[1.0, 0.0], [0.0, q22]])
    potential = Potential(sgd.ProblemSpec("direct", link, 1, 100).loss(), 1)
    ode = flows.solve_direct_ode(initial, potential, np.linspace(0, 2.0, 5), d=100)
    if trapped:
        assert np.max(np.abs(ode.overlap_ratio)) < 1e-10
        assert np.max(np.abs(ode.column("t1"))) < 1e-10
    else:
        assert ode.overlap_ratio[-1] > 0.5


def test_tied_flow_moments_follow_the_exact_third_moment_identity():
    """dp₁₂/dt = −2Γ₁₁(μ₁₁₂ − t₂q₁₁) − 2Γ₁₂(μ₁₂₂ − t₂q₁₂) for the matrix flow (γ = 0), any d."""
    spec = sgd.ProblemSpec("tied", "h2", 1, 30)
    student, teacher, _ = sgd.initial_problem(spec, 2)
    W = student.W
    potential = Potential(spec.loss(), 1)
    dW = flows.tied_flow_rhs(0.0, W.ravel(), flows.TiedFlowParams(teacher, potential, W.shape))
    dW = dW.reshape(W.shape)
    S1, S2 = W @ W.T, teacher.dense()
    dS1 = dW @ W.T + W @ dW.T
    d = 30
    t1, t2 = np.trace(S1) / d, np.trace(S2) / d
    dp12 = np.trace(dS1 @ S2) / d - t2 * np.trace(dS1) / d
    gamma = potential.gamma(np.array([[np.trace(S1 @ S1), np.trace(S1 @ S2)],
                                      [np.trace(S1 @ S2), np.trace(S2 @ S2)]]) / d)
    mu112, mu122 = np.trace(S1 @ S1 @ S2) / d, np.trace(S1 @ S2 @ S2) / d
    q11, q12 = np.trace(S1 @ S1) / d, np.trace(S1 @ S2) / d
    expected = -2 * gamma[0, 0] * (mu112 - t2 * q11) - 2 * gamma[0, 1] * (mu122 - t2 * q12)
    assert dp12 == pytest.approx(expected, rel=1e-10)
    assert t1 > 0


@pytest.mark.parametrize("link", ["h1", "h2", "h3"])
def test_initial_velocity_of_the_structural_overlap_at_large_d(link):
    """[P eq. 17]: dp₁₂/dt|₀ = −2Γ₁₂ t₁ p₂₂ at an independent (uninformative) initialisation.

    Exact only as d → ∞ (the mixed centered moments of Assumption 3 are
    O(d^{-1/2})); at d = 1600 the identity holds to 5 %.
    """
    d = 1600
    spec = sgd.ProblemSpec("tied", link, 1, d)
    student, teacher, _ = sgd.initial_problem(spec, 0)
    W = student.W
    potential = Potential(spec.loss(), 1)
    dW = flows.tied_flow_rhs(0.0, W.ravel(),
                             flows.TiedFlowParams(teacher, potential, W.shape)).reshape(W.shape)
    op = OrderParameters(*trace_products([FactoredMatrix(W), teacher]))
    teacher_W = teacher.scale * (teacher.left @ (teacher.left.T @ W))
    dp12 = 2 * np.sum(dW * teacher_W) / d - op.trace[1] * 2 * np.sum(dW * W) / d
    predicted = -2 * potential.gamma(op.Psi)[0, 1] * op.trace[0] * op.p_Psi[1, 1]
    assert predicted > 0
    assert dp12 == pytest.approx(predicted, rel=0.05)


def test_flows_report_blow_up_and_check_arguments():
    # Ω₁₁ grows from 0.6 to 0.8 (the inert skew part stays): beyond a 1.0001 "blow-up" bound.
    initial = OrderParameters([0.0, 0.3], [[0.0, 0.0], [0.0, 0.5]], [[0.6, 0.0], [0.0, 0.5]])
    potential = Potential(sgd.ProblemSpec("direct", "h1", 1, 10).loss(), 1)
    ode = flows.solve_direct_ode(initial, potential, np.linspace(0, 3.0, 4), d=10,
                                 blowup_factor=1.0001)
    assert ode.blew_up and 0 < ode.t_blowup < 3.0
    with pytest.raises(ValueError, match="increasing"):
        flows.solve_direct_ode(initial, potential, [0.0], d=10)
    untied_teacher = FactoredMatrix(np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="symmetric teacher"):
        flows.solve_tied_flow(np.ones((4, 2)), untied_teacher, potential, [0.0, 1.0])


@pytest.mark.parametrize("param", ["tied", "direct"])
def test_a_flow_with_a_stop_overlap_ends_there_and_keeps_its_records_before(param):
    """The stop event (as SGD's stop_overlap) changes no step: the records before it are the full flow's."""
    spec = sgd.ProblemSpec(param, "h2", 1, 40, rho=0.5, normalisation="unit_variance")
    times = np.linspace(0.0, 6.0, 61)
    full = flows.reference_flow(spec, 5, times)
    stopped = flows.reference_flow(spec, 5, times, stop_overlap=0.5)
    k = len(stopped) - 1
    assert 2 <= k < len(full)
    np.testing.assert_array_equal(stopped.order[:k], full.order[:k])
    np.testing.assert_array_equal(stopped.t_ode[:k], full.t_ode[:k])
    # the last record is the stop: between two of the full flow's records, at overlap 0.5
    assert full.t_ode[k - 1] < stopped.t_ode[-1] <= full.t_ode[k]
    assert stopped.overlap_ratio[-1] == pytest.approx(0.5, abs=1e-6)
    assert full.overlap_ratio[k] >= 0.5 > full.overlap_ratio[k - 1]
    assert not stopped.blew_up and set(stopped.extra["status"]) == {0}
    assert stopped.weak_recovery_time(0.3) == pytest.approx(full.weak_recovery_time(0.3), abs=0.02)
    # a stop that is never reached: the whole horizon, bit for bit
    never = flows.reference_flow(spec, 5, times, stop_overlap=1e9)
    np.testing.assert_array_equal(never.order, full.order)
