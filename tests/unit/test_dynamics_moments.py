"""The tied moment hierarchy, its truncations and the Riccati case (``docs/paper2.md`` §4, §4.4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from aimrepro.paper2 import flows
from aimrepro.paper2 import moments, sgd
from aimrepro.paper2.matrices import FactoredMatrix
from aimrepro.paper2.population import Potential


def _riccati_spec(d: int, prefactor: float = 1.0) -> sgd.ProblemSpec:
    return sgd.ProblemSpec("tied", "linear", 1, d, rho=0.5, normalisation="aim",
                           loss_prefactor=prefactor)


def _dense_moment(mats, word, d):
    product = np.eye(d)
    for k in word:
        product = product @ mats[k]
    return np.trace(product) / d


def test_words_are_bracelet_classes_with_precomputed_insertions():
    # bracelets of length 1..8 over two letters (OEIS A000029)
    basis = moments.WordBasis(8)
    counts = [int(np.sum(basis.lengths == w)) for w in range(1, 9)]
    assert counts == [2, 3, 4, 6, 8, 13, 18, 30]
    for word in itertools.product(range(2), repeat=6):
        i = basis.index(word)
        assert basis.index(word[2:] + word[:2]) == i
        assert basis.index(word[::-1]) == i
    # one term per (trainable letter, inserted letter, before/after)
    assert basis.targets.size == int(np.sum(2 * 2 * basis.n_trainable))
    assert np.all(basis.sources[basis.lengths[basis.targets] == 8] == len(basis))   # truncated
    assert basis.words[basis.q_index[0, 1]] == (0, 1)
    with pytest.raises(ValueError, match="truncation order M"):
        moments.WordBasis(1)


def test_initial_moments_are_the_normalised_traces_of_every_word():
    rng = np.random.default_rng(0)
    d = 12
    W, V = rng.standard_normal((d, 5)), rng.standard_normal((d, 7))
    S1, S2 = W @ W.T / d, V @ V.T / d
    basis = moments.WordBasis(5)
    mu = moments.initial_moments(basis, [S1, FactoredMatrix(V, None, 1.0 / d)])
    for w in range(1, 6):
        for word in itertools.product(range(2), repeat=w):
            assert mu[basis.index(word)] == pytest.approx(_dense_moment([S1, S2], word, d),
                                                          rel=1e-12)
    smaller = moments.WordBasis(3)
    np.testing.assert_allclose(basis.restrict(mu, smaller),
                               moments.initial_moments(smaller, [S1, S2]), rtol=1e-14)


@pytest.mark.parametrize(("link", "T", "weight_decay"), [("softmax", 2, 0.7), ("h2", 1, 0.0)])
def test_hierarchy_rhs_equals_finite_differences_of_the_matrix_flow_moments(link, T,
                                                                             weight_decay):
    """[P eq. 11] is exact for the matrix flow at any d: dμ_α/dt by central differences."""
    d = 24
    spec = sgd.ProblemSpec("tied", link, T, d, rho=0.5, normalisation="aim")
    student, teacher, _ = sgd.initial_problem(spec, 3)
    W = student.W
    potential = Potential(spec.loss(), T)
    params = flows.TiedFlowParams(teacher, potential, W.shape, weight_decay)
    dW = flows.tied_flow_rhs(0.0, W.ravel(), params).reshape(W.shape)
    basis = moments.WordBasis(6)
    S2 = teacher.dense()
    h = 1e-5
    plus = moments.initial_moments(basis, [(W + h * dW) @ (W + h * dW).T, S2])
    minus = moments.initial_moments(basis, [(W - h * dW) @ (W - h * dW).T, S2])
    finite_difference = (plus - minus) / (2 * h)
    mu0 = moments.initial_moments(basis, [W @ W.T, S2])
    rhs = moments.hierarchy_rhs(0.0, mu0, moments.HierarchyParams(basis, potential.gamma,
                                                                   weight_decay))
    closed = basis.lengths < basis.max_length       # their right-hand sides need no truncation
    scale = np.abs(finite_difference[closed]).max()
    np.testing.assert_allclose(rhs[closed], finite_difference[closed], rtol=1e-6,
                               atol=1e-8 * scale)
    teacher_words = basis.n_trainable == 0
    assert np.all(rhs[teacher_words] == 0)


@pytest.mark.parametrize("prefactor", [1.0, 0.5])
def test_truncations_of_order_2_and_3_are_the_explicit_polynomials(prefactor):
    """[P eqs. 340–341] (c = 1), generalised to the prefactor c of c(G₁ − G₂)²."""
    spec = _riccati_spec(40, prefactor)
    student, teacher, _ = sgd.initial_problem(spec, 0)
    potential = Potential(spec.loss(), 1)
    times = np.linspace(0.0, 0.05, 6)
    basis3 = moments.WordBasis(3)
    mu = moments.initial_moments(basis3, [student.W @ student.W.T, teacher])
    initial = {"mu1": mu[basis3.index((0,))], "q11": mu[basis3.index((0, 0))],
               "q12": mu[basis3.index((0, 1))], "mu111": mu[basis3.index((0, 0, 0))],
               "mu112": mu[basis3.index((0, 0, 1))], "mu122": mu[basis3.index((0, 1, 1))]}
    for order in (2, 3):
        basis = moments.WordBasis(order)
        run = moments.solve_truncation(basis, basis3.restrict(mu, basis), potential.gamma, times,
                                       rtol=1e-12, atol=1e-14)
        explicit = moments.explicit_truncation(order, initial, times, prefactor=prefactor)
        for name, word in (("mu1", (0,)), ("q11", (0, 0)), ("q12", (0, 1))):
            np.testing.assert_allclose(run.column(word), explicit[name], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="order 2 and 3"):
        moments.explicit_truncation(4, initial, times)


@pytest.mark.parametrize("weight_decay", [0.0, 2.0])
def test_riccati_closed_form_is_the_matrix_flow(weight_decay):
    """Closed form against solve_ivp of dW/dt, singular teacher and student (r < d)."""
    d = 40
    spec = _riccati_spec(d)
    student, teacher, _ = sgd.initial_problem(spec, 1)
    times = np.array([0.0, 0.02, 0.1, 0.4])
    flow = flows.solve_tied_flow(student.W, teacher, Potential(spec.loss(), 1), times,
                                 weight_decay=weight_decay, rtol=1e-11, atol=1e-13)
    basis = moments.WordBasis(2)
    exact = moments.riccati_moments(basis, student.W, teacher, times,
                                    weight_decay=weight_decay)
    np.testing.assert_allclose(exact[:, basis.index((0,))], flow.column("t1"), rtol=1e-7)
    np.testing.assert_allclose(exact[:, basis.index((0, 0))], flow.column("Psi11"), rtol=1e-7)
    np.testing.assert_allclose(exact[:, basis.index((0, 1))], flow.column("Psi12"), rtol=1e-7)


def test_riccati_closed_form_is_the_papers_formula_for_invertible_matrices():
    """[P eq. 343]: S(t)⁻¹ = e^{−2S*t} S(0)⁻¹ e^{−2S*t} + S*⁻¹(I − e^{−4S*t})."""
    rng = np.random.default_rng(5)
    d = 15
    W = rng.standard_normal((d, 2 * d)) / math.sqrt(2 * d)     # wider than tall: S(0) invertible
    V = rng.standard_normal((d, 2 * d)) / math.sqrt(2 * d)
    S0, S_star = W @ W.T, V @ V.T
    lam, U = np.linalg.eigh(S_star)
    t = 0.3
    E = (U * np.exp(-2 * lam * t)) @ U.T
    inverse = E @ np.linalg.inv(S0) @ E + (U * (-np.expm1(-4 * lam * t) / lam)) @ U.T
    np.testing.assert_allclose(moments.riccati_solution(W, S_star, [t])[0],
                               np.linalg.inv(inverse), rtol=1e-9, atol=1e-12)


def test_riccati_closed_form_matches_sgd():
    """§4.4 item 1: tied online SGD of ℒ = (G₁ − G₂)² follows the closed form (d = 100)."""
    spec = _riccati_spec(100)
    settings = sgd.SGDSettings(lr=0.02, batch=256, horizon=0.05, n_records=6)
    run = sgd.SGDRun(spec, settings, 2).run()
    student, teacher, _ = sgd.initial_problem(spec, 2)
    basis = moments.WordBasis(2)
    exact = moments.riccati_moments(basis, student.W, teacher, run.t_ode)
    q22 = exact[0, basis.index((1, 1))]
    for name, word in (("t1", (0,)), ("Psi11", (0, 0)), ("Psi12", (0, 1))):
        assert np.max(np.abs(run.column(name) - exact[:, basis.index(word)])) < 0.03 * q22
    # the run really moves: q11 falls by a third over the horizon
    assert exact[-1, basis.index((0, 0))] < 0.7 * exact[0, basis.index((0, 0))]


@pytest.mark.parametrize("weight_decay", [0.0, 1.5])
def test_teacher_multiple_of_identity_follows_the_spectral_formula(weight_decay):
    """[P eqs. 347–348]: with S* = c I, μ₁(t) = ∫ cλ/(λ + (c − λ)e^{−4ct}) dρ₀(λ) (γ = 0)."""
    d, c = 30, 0.8
    rng = np.random.default_rng(3)
    W = rng.standard_normal((d, 12)) / math.sqrt(12)            # rank 12: zero eigenvalues too
    teacher = FactoredMatrix(np.zeros((d, 1)), None, 0.0, c)      # S* = c I
    times = np.array([0.0, 0.1, 0.5, 2.0])
    spectrum = np.linalg.eigvalsh(W @ W.T)
    spectrum[spectrum < 1e-12] = 0.0                              # the d − 12 zero eigenvalues
    formula = moments.spectral_first_moment(spectrum, c, times,
                                            weight_decay=weight_decay)
    closed = np.trace(moments.riccati_solution(W, teacher, times, weight_decay=weight_decay),
                      axis1=1, axis2=2) / d
    np.testing.assert_allclose(formula, closed, rtol=1e-9, atol=1e-13)
    linear = Potential(_riccati_spec(d).loss(), 1)
    flow = flows.solve_tied_flow(W, teacher, linear, times, weight_decay=weight_decay,
                                 rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(formula, flow.column("t1"), rtol=1e-7)
    if weight_decay == 0:
        # every nonzero eigenvalue tends to c: μ₁ → c · rank/d
        late = moments.spectral_first_moment(spectrum, c, [8.0])
        assert late[0] == pytest.approx(c * 12 / d, rel=1e-6)


def test_truncation_error_decays_with_the_order_on_a_short_horizon():
    """[P Cor. 2, App. D.3]: the linear truncations are Taylor polynomials of the exact flow."""
    spec = _riccati_spec(60)
    student, teacher, _ = sgd.initial_problem(spec, 0)
    W = math.sqrt(0.3) * student.W
    teacher = teacher.scaled(0.3)
    times = np.array([0.0, 0.02])
    basis = moments.WordBasis(10)
    mu0 = moments.initial_moments(basis, [W @ W.T, teacher])
    exact = moments.riccati_moments(moments.WordBasis(2), W, teacher, times)[-1, 3]   # q12
    potential = Potential(spec.loss(), 1)
    errors = []
    for order in (2, 4, 6, 8, 10):
        small = moments.WordBasis(order)
        run = moments.solve_truncation(small, basis.restrict(mu0, small), potential.gamma,
                                       times, rtol=1e-12, atol=1e-15)
        errors.append(abs(run.column((0, 1))[-1] - exact))
    # 1.3e-4, 3.7e-6, 2.0e-8, 1.2e-10, 7.6e-13: two orders gain a factor > 30
    assert all(b < 0.1 * a for a, b in zip(errors, errors[1:]))
    assert errors[-1] < 1e-7 * errors[0]


def test_truncation_records_blow_up_and_psd_exit():
    """An anti-damped Γ makes the truncation diverge: it stops and says when."""
    basis = moments.WordBasis(4)
    d = 20
    rng = np.random.default_rng(1)
    W = rng.standard_normal((d, 10)) / math.sqrt(10)
    V = rng.standard_normal((d, 10)) / math.sqrt(10)
    mu0 = moments.initial_moments(basis, [W @ W.T, V @ V.T])

    def growing(q):
        return np.array([[-1.0, 0.0], [0.0, 0.0]])              # dS/dt = 2 S²: finite-time blow-up

    times = np.linspace(0.0, 5.0, 11)
    run = moments.solve_truncation(basis, mu0, growing, times, blowup_factor=100.0)
    assert run.blew_up and 0 < run.t_blowup < 5.0
    assert run.t_ode[-1] < run.t_blowup and np.all(np.isfinite(run.moments))
    trajectory = run.trajectory(d)
    assert trajectory.blew_up and trajectory.columns()["blew_up"][-1]

    def pushing_apart(q):
        return np.array([[0.0, 3.0], [3.0, 0.0]])               # drives q12 past √(q11 q22)

    run = moments.solve_truncation(basis, mu0, pushing_apart, np.linspace(0, 2.0, 5))
    assert 0 < run.t_left_psd < 2.0
    with pytest.raises(ValueError, match="increasing"):
        moments.solve_truncation(basis, mu0, growing, [0.0])
    with pytest.raises(ValueError, match="one entry per word"):
        moments.solve_truncation(basis, mu0[:-1], growing, times)


def test_psd_projection_and_argument_checks():
    q = np.array([[1.0, 2.0], [2.0, 1.0]])                      # eigenvalues 3, −1
    projected = moments.project_psd(q)
    assert np.linalg.eigvalsh(projected).min() > -1e-15
    np.testing.assert_allclose(projected, [[1.5, 1.5], [1.5, 1.5]])
    np.testing.assert_array_equal(moments.project_psd(np.eye(2)), np.eye(2))
    with pytest.raises(ValueError, match="prefactor"):
        moments.riccati_solution(np.ones((3, 1)), np.eye(3), [0.1], prefactor=0.0)
    with pytest.raises(ValueError, match="symmetric"):
        moments.initial_moments(moments.WordBasis(2), [np.ones((3, 3)), np.triu(np.ones((3, 3)))])
