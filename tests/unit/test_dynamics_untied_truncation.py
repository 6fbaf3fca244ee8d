"""The truncated slow hierarchy of untied attention ([P App. F.2, Cor. 8]; ``docs/paper2.md`` §2.3)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from aimrepro.paper2 import sgd
from aimrepro.paper2.untied import fast
from aimrepro.paper2.untied import slow
from aimrepro.paper2.untied import truncation as ut
from aimrepro.paper2.population import Potential


def _problem(link="h2", d=12, m2=1.5, seed=0):
    spec = sgd.ProblemSpec("untied", link, 1, d, rho=1.0, student_rho=1.0, teacher_mean=m2,
                           init_scale=1.0, init_scale_v=0.9, normalisation="unit_variance")
    student, teacher, _ = sgd.initial_problem(spec, seed)
    potential = Potential(spec.loss(), 1)
    state = slow.untied_state(student.U, student.V, teacher)
    m0 = fast.fast_fixed_point(fast.MeanLandscape.at(potential, state),
                                 float(state.mean[0])).m_star
    return spec, student, teacher, potential, m0


def test_word_classes_are_closed_and_invariant():
    basis = ut.UntiedWordBasis(4)
    for word in basis.words:
        # rotations and the transposed reversal are one class
        for i in range(len(word)):
            assert basis.index(word[i:] + word[:i]) == basis.index(word)
        transposed = tuple((1, 0, 2, 3, 5, 4)[z] for z in reversed(word))
        assert basis.index(transposed) == basis.index(word)
    assert basis.index(("M", "Nt")) == basis.required["q1_12"]
    assert basis.index(("Nt", "M")) == basis.required["q1_12"]       # Tr(M Nᵀ) = Tr(Nᵀ M)
    assert basis.index(("N", "Mt")) == basis.required["q1_12"]       # = Tr(N Mᵀ)
    # every insertion source is a word of the basis or the zero slot of longer words
    assert basis.sources.max() <= len(basis)
    too_long = basis.sources == len(basis)
    assert np.all(basis.lengths[basis.targets[too_long]] == 4)
    assert [int(np.sum(basis.lengths == w)) for w in range(1, 5)] == [3, 13, 42, 179]
    with pytest.raises(ValueError, match="truncation order M"):
        ut.UntiedWordBasis(1)
    with pytest.raises(ValueError, match="letters must be among"):
        ut.canonical_untied_word(("M", "Q"))


def test_initial_moments_are_the_traces_of_the_words():
    _, student, teacher, _, _ = _problem(d=9)
    basis = ut.UntiedWordBasis(3)
    mu = ut.untied_initial_moments(basis, student.U, student.V, teacher)
    M, N = student.U @ student.V.T, teacher.dense()
    mats = {"M": M, "Mt": M.T, "A": student.U @ student.U.T, "B": student.V @ student.V.T,
            "N": N, "Nt": N.T}
    for w in range(1, 4):
        for word in itertools.product(ut.LETTERS, repeat=w):
            try:
                i = basis.index(word)
            except KeyError:
                continue
            product = np.eye(9)
            for z in word:
                product = product @ mats[z]
            assert mu[i] == pytest.approx(np.trace(product) / 9, rel=1e-10, abs=1e-13)


@pytest.mark.parametrize(("link", "gamma"), [("h2", 0.2), ("h1", 0.0), ("h3", 0.0)])
def test_truncated_velocities_are_the_slow_flow_moment_velocities(link, gamma):
    """Words shorter than M need no truncated word: their velocity is exact at finite d."""
    spec, student, teacher, potential, m0 = _problem(link, d=14, m2=1.2)
    basis = ut.UntiedWordBasis(4)
    mu = ut.untied_initial_moments(basis, student.U, student.V, teacher)
    params = ut.UntiedHierarchyParams(basis, potential, 1.2, m0, gamma)
    rhs = ut.untied_hierarchy_rhs(0.0, mu, params)
    flow = slow.UntiedFlowParams(teacher, potential, student.U.shape, m0, gamma)
    y = np.concatenate([student.U.ravel(), student.V.ravel()])
    f = slow.slow_flow_rhs(0.0, y, flow)
    eps = 1e-6

    def moments(z):
        U, V = slow._split(z, student.U.shape)
        return ut.untied_initial_moments(basis, U, V, teacher)

    fd = (moments(y + eps * f) - moments(y - eps * f)) / (2 * eps)
    short = basis.lengths < 4
    scale = np.max(np.abs(fd[short]))
    np.testing.assert_allclose(rhs[short], fd[short], atol=1e-7 * scale)
    # the effective bias keeps Tr M fixed (up to weight decay), and the teacher is fixed
    r = basis.required
    assert rhs[r["mean"]] == pytest.approx(-2 * gamma * mu[r["mean"]], abs=1e-12 * scale)
    assert rhs[r["q1_22"]] == 0.0 and rhs[r["q2_22"]] == 0.0
    coef = ut.coefficients(mu, params)
    assert coef["m_star"] == pytest.approx(slow.slaved_mean(
        flow, slow.untied_state(student.U, student.V, teacher)).m_star, abs=1e-10)


def test_cone_projection():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 2))
    q1, q2 = A @ A.T + np.eye(2), 0.1 * np.array([[1.0, 0.2], [0.2, -0.5]])
    p1, p2 = ut.project_covariances(q1, q2)
    np.testing.assert_allclose(p1, q1)
    np.testing.assert_allclose(p2, q2)
    bad1, bad2 = np.array([[1.0, 2.0], [2.0, 1.0]]), np.array([[0.0, 0.0], [0.0, 1.5]])
    p1, p2 = ut.project_covariances(bad1, bad2)
    assert np.linalg.eigvalsh(p1 + p2)[0] >= -1e-12 and np.linalg.eigvalsh(p1 - p2)[0] >= -1e-12
    again = ut.project_covariances(p1, p2)
    np.testing.assert_allclose(again[0], p1, atol=1e-12)
    np.testing.assert_allclose(again[1], p2, atol=1e-12)


def test_truncation_error_decays_geometrically_in_the_order_at_short_times():
    """[P Cor. 8] on a horizon inside the radius (γ = 0: no uniform-in-time bound)."""
    spec, student, teacher, potential, m0 = _problem("h1", d=16, m2=0.5)
    times = np.array([0.0, 0.01, 0.02])
    limit = slow.solve_slow_flow(student.U, student.V, teacher, potential, times,
                                   mean_start=m0, rtol=1e-11, atol=1e-13)
    errors = []
    for order in (2, 3, 4, 5):
        basis = ut.UntiedWordBasis(order)
        mu0 = ut.untied_initial_moments(basis, student.U, student.V, teacher)
        run = ut.solve_untied_truncation(basis, mu0, potential, times, d=16, teacher_mean=0.5,
                                         mean_start=m0, rtol=1e-11, atol=1e-13)
        assert not run.blew_up
        trajectory = run.trajectory()
        assert trajectory.column("Omega22")[0] == pytest.approx(limit.column("Omega22")[0])
        errors.append(float(np.max(np.abs(trajectory.symmetric_overlap
                                          - limit.symmetric_overlap))))
    ratios = np.array(errors[1:]) / np.array(errors[:-1])
    assert np.all(ratios < 0.3), errors
    assert errors[-1] < 1e-4
