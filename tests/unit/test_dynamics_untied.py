"""Untied attention (``docs/paper2.md`` §2.3, §5.3; [P eqs. 24–49]): the flows, the fast fixed point,
the moment hierarchy, the dichotomy, and reproducible untied SGD."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy.integrate import solve_ivp

from aimrepro.paper2 import sgd
from aimrepro.paper2.untied import dichotomy
from aimrepro.paper2.untied import fast
from aimrepro.paper2.untied import hierarchy
from aimrepro.paper2.untied import slow
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import FactoredMatrix
from aimrepro.paper2.population import IndexLaw, Potential


def _problem(link="h2", T=1, d=12, *, teacher_mean=0.7, init_mean=None, seed=3, rho=1.0):
    spec = sgd.ProblemSpec("untied", link, T, d, rho=rho, student_rho=rho,
                           teacher_mean=teacher_mean, init_mean=init_mean)
    student, teacher, rng = sgd.initial_problem(spec, seed)
    return spec, student, teacher, rng


def _potential(link, T=1):
    return Potential(MSELoss(make_link(link), make_link(link)), T)


def _phi(potential, U, V, teacher):
    state = slow.untied_state(U, V, teacher)
    law = IndexLaw.untied(state.mean, state.q1, state.q2, potential.T)
    return potential.evaluate(law, gradient=False).value


@pytest.mark.parametrize(("link", "T"), [("h2", 1), ("h3", 1), ("h2", 2)])
def test_population_flow_is_minus_d_times_the_gradient_of_phi(link, T):
    """The matrix flow's transposes, checked against Φ(m(U, V), q(U, V)) by finite differences."""
    spec, student, teacher, rng = _problem(link, T, d=10)
    potential = _potential(link, T)
    U, V = student.U, student.V
    params = slow.UntiedFlowParams(teacher, potential, U.shape)
    velocity = slow.population_flow_rhs(0.0, np.concatenate([U.ravel(), V.ravel()]), params)
    dU, dV = rng.standard_normal(U.shape), rng.standard_normal(V.shape)
    eps = 1e-5
    fd = (_phi(potential, U + eps * dU, V + eps * dV, teacher)
          - _phi(potential, U - eps * dU, V - eps * dV, teacher)) / (2 * eps)
    analytic = float(velocity @ np.concatenate([dU.ravel(), dV.ravel()]))
    assert analytic == pytest.approx(-spec.d * fd, rel=1e-6)


def _dense(U, V, teacher):
    M2 = teacher.dense()
    L, R = teacher.left, teacher._right
    return {"M1": U @ V.T, "A1": U @ U.T, "B1": V @ V.T, "M2": M2,
            "A2": teacher.scale * L @ L.T, "B2": teacher.scale * R @ R.T}


WORDS = [("M1",), ("M1", "M2T"), ("M1", "M2"), ("M1", "M1T"), ("M1", "M1"), ("A1",), ("B1",),
         ("A1", "M2", "B1", "M1T"), ("M1T", "A2", "M1", "B2"), ("B1", "M2T", "A1")]


@pytest.mark.parametrize("flow", ["slow", "population"])
def test_moment_velocities_follow_the_rederived_hierarchy(flow):
    """[P eq. 32] with the transposes of eq. 31 restored, against finite differences of the moments."""
    spec, student, teacher, _ = _problem("h2", 2, d=9)
    potential = _potential("h2", 2)
    U, V = student.U, student.V
    gamma = 0.3
    state = slow.untied_state(U, V, teacher)
    if flow == "slow":
        m_start = fast.fast_fixed_point(fast.MeanLandscape.at(potential, state),
                                          float(state.mean[0])).m_star
        params = slow.UntiedFlowParams(teacher, potential, U.shape, m_start, gamma)
        rhs = slow.slow_flow_rhs
        mean = slow.slaved_mean(params, state).m_star
    else:
        params = slow.UntiedFlowParams(teacher, potential, U.shape, 0.0, gamma)
        rhs = slow.population_flow_rhs
        mean = float(state.mean[0])
    value = potential.evaluate(IndexLaw.untied([mean, state.mean[1]], state.q1, state.q2, 2))
    a, b = value.d_Omega, value.d_Psi
    bias = (slow._Factors(U, V, teacher).effective_bias(a, b) if flow == "slow"
            else math.sqrt(spec.d) * value.d_mean[0])
    y = np.concatenate([U.ravel(), V.ravel()])
    f = rhs(0.0, y, params)
    eps = 1e-6

    def moment(word, z):
        Uz, Vz = slow._split(z, U.shape)
        mats = _dense(Uz, Vz, teacher)
        mats.update(M1T=mats["M1"].T, M2T=mats["M2"].T)
        product = np.eye(spec.d)
        for letter in word:
            product = product @ mats[letter]
        return np.trace(product) / spec.d

    dense = _dense(U, V, teacher)
    for word in WORDS:
        fd = (moment(word, y + eps * f) - moment(word, y - eps * f)) / (2 * eps)
        predicted = hierarchy.hierarchy_velocity(word, dense, bias=bias, a=a, b=b,
                                              weight_decay=gamma)
        assert predicted == pytest.approx(fd, rel=1e-6, abs=1e-9), word
    if flow == "slow":
        # the effective bias of [P eq. 30] keeps Tr(M1) fixed (up to weight decay)
        assert moment(("M1",), y + eps * f) - moment(("M1",), y - eps * f) == pytest.approx(
            -2 * gamma * 2 * eps * moment(("M1",), y), abs=1e-12)
    with pytest.raises(ValueError, match="letters must be among"):
        hierarchy.hierarchy_velocity(("M3",), dense, bias=0.0, a=a, b=b)


@pytest.mark.parametrize(("link", "m2", "v1", "start"),
                         [("h2", 1.5, 1.0, 0.01), ("h2", 1.5, 1.0, -0.01), ("h2", 1.0, 1.0, 0.3),
                          ("h1", 0.8, 1.0, 0.0), ("h3", 0.6, 0.7, 0.1)])
def test_fast_fixed_point_is_a_minimum_of_phi_in_the_mean(link, m2, v1, start):
    """m* against a direct minimisation of Φ(m) in the basin the fast flow starts in."""
    potential = _potential(link)
    landscape = fast.MeanLandscape(potential, m2, np.diag([v1, 1.0]), np.zeros((2, 2)))
    fixed = fast.fast_fixed_point(landscape, start)
    assert fixed.converged and fixed.stable and fixed.residual < 1e-9
    lo, hi = (start, start + 5.0) if landscape.gradient(start) < 0 else (start - 5.0, start)
    direct = optimize.minimize_scalar(landscape.value, bounds=(lo, hi), method="bounded",
                                      options={"xatol": 1e-10})
    assert fixed.m_star == pytest.approx(direct.x, abs=1e-6)
    if link == "h2":   # ∂Φ/∂m = m(m² + 3v₁ − v₂ − m₂²) at q₁₂ = 0 (docs/paper2.md §5.3)
        expected = math.copysign(math.sqrt(max(m2 ** 2 + 1.0 - 3 * v1, 0.0)), start)
        assert fixed.m_star == pytest.approx(expected, abs=1e-9)
    if link == "h1":
        assert fixed.m_star == pytest.approx(m2, abs=1e-10)


def test_fast_flow_relaxes_to_the_fixed_point_with_the_papers_rate():
    potential = _potential("h2")
    landscape = fast.MeanLandscape(potential, 2.0, np.diag([1.0, 1.0]), np.zeros((2, 2)))
    m, diag = fast.solve_fast_flow(landscape, 0.2, 2.0, [0.0, 1e-4, 30.0])
    assert diag["converged"]
    assert (m[1] - m[0]) / 1e-4 == pytest.approx(-2.0 * landscape.gradient(0.2), rel=1e-3)
    assert m[2] == pytest.approx(math.sqrt(2.0), abs=1e-7)
    with pytest.raises(ValueError, match="rate must be"):
        fast.solve_fast_flow(landscape, 0.2, 0.0, [0.0, 1.0])


def test_threshold_and_dichotomy_of_h2_are_the_closed_forms():
    potential = _potential("h2")
    for v1, v2 in ((1.0, 1.0), (0.8, 1.2)):
        assert dichotomy.symmetric_state_threshold(potential, v1, v2) == pytest.approx(
            math.sqrt(3 * v1 - v2), abs=1e-8)
    with pytest.raises(ValueError, match="not a critical point"):
        dichotomy.symmetric_state_threshold(_potential("h1"), 1.0, 1.0)
    q1, q2 = np.diag([1.0, 1.0]), np.zeros((2, 2))
    state = fast.UntiedState(np.array([0.5, 1.5]), q1, q2, 1.2, 0.8)
    crit = dichotomy.dichotomy(potential, state, 0.5)
    # E h2'(Z) = √2 E Z; cross-gradient a12 + b12 = −E σ' E σ*' for c = ½ at q12 = 0
    assert crit.student_factor == pytest.approx(math.sqrt(2) * 0.5, rel=1e-12)
    assert crit.teacher_factor == pytest.approx(math.sqrt(2) * 1.5, rel=1e-12)
    assert crit.cross_gradient == pytest.approx(-crit.product, rel=1e-10)
    assert crit.slope == pytest.approx(2 * 2.0 * crit.product, rel=1e-10)
    table, diag = dichotomy.fast_state_table(potential, [0.0, 1.0, 2.0], v1=1.0, v2=1.0, rate=2.0)
    assert diag["threshold"] == pytest.approx(math.sqrt(2), abs=1e-8)
    np.testing.assert_allclose(table["m_star_plus"], [0.0, 0.0, math.sqrt(2)], atol=1e-8)
    np.testing.assert_allclose(table["m_star_minus"], [0.0, 0.0, -math.sqrt(2)], atol=1e-8)
    np.testing.assert_allclose(table["product"], [0.0, 0.0, 2 * math.sqrt(2) * 2], atol=1e-7)


def test_stiff_and_explicit_solvers_of_the_population_flow_agree():
    """ROS2 (rank-one W-method), Radau (dense Jacobian) and RK45 on the stiff flow at d = 12."""
    spec, student, teacher, _ = _problem("h2", 1, 12, teacher_mean=2.0, init_mean=0.5, seed=0)
    potential = _potential("h2")
    times = np.array([0.0, 0.02, 0.1])
    # ROS2 is second order: it is meant for loose tolerances, where it takes few steps
    tolerances = {"ROS2": (1e-4, 2e-3), "Radau": (1e-7, 2e-5), "LSODA": (1e-7, 2e-5),
                  "RK45": (1e-9, 0)}
    runs = {method: slow.solve_population_flow(student.U, student.V, teacher, potential, times,
                                                 method=method, rtol=rtol, atol=1e-3 * rtol)
            for method, (rtol, _) in tolerances.items()}
    for method, run in runs.items():
        assert not run.blew_up, method
        agreement = tolerances[method][1]
        np.testing.assert_allclose(run.order, runs["RK45"].order, atol=agreement, err_msg=method)
        np.testing.assert_allclose(run.extra["m_flow"], runs["RK45"].extra["m_flow"],
                                   atol=agreement, err_msg=method)
    # the stiff mean relaxes from 0.5 towards the fast fixed point (≈ √2 at q(0))
    assert runs["ROS2"].extra["m_flow"][1] > 1.2
    for method in ("RK45", "ROS2"):
        stopped = slow.solve_population_flow(student.U, student.V, teacher, potential,
                                               np.linspace(0, 0.1, 11), stop_overlap=0.2,
                                               method=method, rtol=1e-4)
        assert stopped.t_ode[-1] < 0.1 and not stopped.blew_up
        assert abs(stopped.symmetric_overlap[-1]) >= 0.2 - 1e-9
        assert np.all(np.abs(stopped.symmetric_overlap[:-1]) < 0.2)
    with pytest.raises(ValueError, match="U0 and V0"):
        slow.solve_population_flow(student.U, student.V[:, :3], teacher, potential, times)
    # the state at the last record continues the flow: two legs give the one-leg trajectory
    whole = slow.solve_population_flow(student.U, student.V, teacher, potential, times,
                                       rtol=1e-9, atol=1e-12)
    first, state = slow.solve_population_flow(student.U, student.V, teacher, potential, times[:2],
                                              rtol=1e-9, atol=1e-12, return_state=True)
    assert state[0].shape == student.U.shape
    second = slow.solve_population_flow(*state, teacher, potential, times[1:], rtol=1e-9,
                                        atol=1e-12)
    np.testing.assert_allclose(second.order, whole.order[1:], atol=1e-7)


def test_population_flow_bias_approaches_the_effective_bias_as_d_grows():
    """[P eq. 30]: after the boundary layer √d ∂Φ/∂m → β̄ = −ψ/(t^A + t^B) at m*(q), as O(d^-1/2)."""
    potential = _potential("h2")
    gaps = []
    for d in (32, 128):
        spec, student, teacher, _ = _problem("h2", 1, d, teacher_mean=2.0, init_mean=0.5, seed=0,
                                             rho=0.5)
        params = slow.UntiedFlowParams(teacher, potential, student.U.shape, 1.0)
        y0 = np.concatenate([student.U.ravel(), student.V.ravel()])
        sol = solve_ivp(slow.population_flow_rhs, (0.0, 0.1), y0, args=(params,), rtol=1e-8,
                        atol=1e-11)
        U, V = slow._split(sol.y[:, -1], student.U.shape)
        state = slow.untied_state(U, V, teacher)
        bias = math.sqrt(d) * potential.evaluate(
            IndexLaw.untied(state.mean, state.q1, state.q2, 1)).d_mean[0]
        m_star = slow.slaved_mean(params, state).m_star
        value = potential.evaluate(IndexLaw.untied([m_star, state.mean[1]], state.q1, state.q2, 1))
        effective = slow._Factors(U, V, teacher).effective_bias(value.d_Omega, value.d_Psi)
        gaps.append(abs(bias - effective))
    assert gaps[1] < 0.6 * gaps[0], gaps


def test_sgd_follows_the_slow_flow_for_the_linear_link():
    """h₁ at d = 100: SGD's symmetric overlap against the slaved flow from the same initial state."""
    spec = sgd.ProblemSpec("untied", "h1", 1, 100, rho=1.0, student_rho=1.0, teacher_mean=0.5)
    times = sgd.fast_slow_record_times(0.2, 5, spec.d, fast_horizon=5.0, n_fast=3)
    reference, diagnostics = slow.untied_reference(spec, 0, times)
    assert diagnostics["converged"]
    assert diagnostics["fast_fixed_point"]["m_star"] == pytest.approx(0.5, abs=1e-9)
    run = sgd.SGDRun(spec, sgd.SGDSettings(lr=0.01, batch=256, horizon=0.2,
                                           record_times=tuple(times)), 0).run()
    np.testing.assert_allclose(run.t_ode, reference.t_ode, atol=1e-12)
    np.testing.assert_allclose(run.symmetric_overlap, reference.symmetric_overlap, atol=0.04)
    # the mean relaxes on the fast time t = τ d to m* = m2, as the fast flow does
    m_sgd = math.sqrt(spec.d) * run.column("t1")
    np.testing.assert_allclose(m_sgd, reference.extra["m_fast"], atol=0.06)
    assert reference.symmetric_overlap[-1] > 0.4


def test_untied_problem_options_and_bit_reproducibility():
    spec = sgd.ProblemSpec("untied", "h2", 1, 40, rho=1.0, student_rho=1.0, teacher_mean=1.5,
                           init_mean=0.25)
    student, teacher, _ = sgd.initial_problem(spec, 0)
    state = slow.untied_state(student.U, student.V, teacher)
    assert state.mean == pytest.approx([0.25, 1.5], abs=1e-12)
    for bad in (dict(param="tied", init_mean=0.1), dict(param="untied", init_mean=math.nan)):
        with pytest.raises(ValueError, match="init_mean applies"):
            sgd.ProblemSpec(bad["param"], "h2", 1, 10, init_mean=bad["init_mean"])
    with pytest.raises(ValueError, match="stop_measure"):
        sgd.SGDSettings(lr=0.01, batch=4, horizon=1.0, stop_measure="cosine")
    times = sgd.fast_slow_record_times(0.05, 3, spec.d, fast_horizon=1.0, n_fast=3)
    settings = sgd.SGDSettings(lr=0.01, batch=16, horizon=0.05, record_times=tuple(times),
                               stop_overlap=0.9, stop_measure="symmetric_overlap")
    first, second = (sgd.SGDRun(spec, settings, 2).run() for _ in range(2))
    np.testing.assert_array_equal(first.order, second.order)
    np.testing.assert_array_equal(first.extra["batch_loss"], second.extra["batch_loss"])
    ref_a, _ = slow.untied_reference(spec, 2, times)
    ref_b, _ = slow.untied_reference(spec, 2, times)
    np.testing.assert_array_equal(ref_a.order, ref_b.order)
    np.testing.assert_array_equal(ref_a.extra["m_fast"], ref_b.extra["m_fast"])


def test_stop_on_the_symmetric_overlap():
    spec = sgd.ProblemSpec("untied", "h1", 1, 30, rho=1.0, student_rho=1.0)
    settings = sgd.SGDSettings(lr=0.01, batch=64, horizon=2.0, n_records=41, stop_overlap=0.3,
                               stop_measure="symmetric_overlap")
    run = sgd.SGDRun(spec, settings, 0).run()
    assert run.t_ode[-1] < 2.0 and abs(run.symmetric_overlap[-1]) >= 0.3
    assert np.all(np.abs(run.symmetric_overlap[:-1]) < 0.3)


def test_record_times_and_limiting_state():
    times = sgd.fast_slow_record_times(0.5, 6, 100, fast_horizon=10.0, n_fast=5)
    assert times[0] == 0 and times[-1] == 0.5 and np.all(np.diff(times) > 0)
    assert {0.025, 0.05, 0.075} <= set(np.round(times, 12))
    with pytest.raises(ValueError, match="n_records"):
        sgd.fast_slow_record_times(1.0, 1, 10)
    spec = sgd.ProblemSpec("untied", "h2", 1, 100, rho=1.0, student_rho=1.0)
    limit = slow.limiting_state(spec)
    assert limit == pytest.approx({"v1": 1.0, "v2": 1.0, "rate": (1 + 0.81) / 0.9})
    student, teacher, _ = sgd.initial_problem(sgd.ProblemSpec("untied", "h2", 1, 400, rho=1.0,
                                                              student_rho=1.0), 0)
    state = slow.untied_state(student.U, student.V, teacher)
    assert state.rate == pytest.approx(limit["rate"], rel=0.03)
    aim = slow.limiting_state(sgd.ProblemSpec("untied", "h2", 1, 100, rho=0.5,
                                                normalisation="aim"))
    assert aim == pytest.approx({"v1": 0.5 * 0.81, "v2": 0.5, "rate": 0.5 * 1.81})


def test_fused_products_equal_the_trace_products_of_part_1():
    _, student, teacher, _ = _problem("h2", 1, 15, teacher_mean=-0.8, init_mean=0.3)
    state = slow.untied_state(student.U, student.V, teacher)
    trace, Psi, Omega = sgd.trace_products([FactoredMatrix(student.U, student.V), teacher])
    np.testing.assert_allclose(state.mean, math.sqrt(15) * trace, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(state.q1, Omega, rtol=1e-12)
    np.testing.assert_allclose(state.q2, Psi, rtol=1e-12)
    assert state.tA == pytest.approx(np.sum(student.U ** 2) / 15, rel=1e-12)


def test_untied_teacher_has_exactly_the_requested_mean():
    for m2 in (0.0, -1.25):
        spec = sgd.ProblemSpec("untied", "h2", 1, 50, teacher_mean=m2)
        _, teacher, _ = sgd.initial_problem(spec, 1)
        assert teacher.trace() / math.sqrt(50) == pytest.approx(m2, abs=1e-12)
        assert isinstance(teacher, FactoredMatrix)
