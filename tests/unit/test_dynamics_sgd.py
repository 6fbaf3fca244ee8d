"""Online SGD of paper 2 (``docs/paper2.md`` §2, §4.4): gradients, time accounting, blow-up, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper2 import sgd
from aimrepro.paper2.losses import MSELoss, make_link
from aimrepro.paper2.matrices import DenseMatrix
from aimrepro.paper2.trajectory import Trajectory, first_crossing_time
from aimrepro.records.tables import read_table, write_table


def _batch_loss(student, teacher, loss, X) -> float:
    y = loss.teacher.apply(teacher.indices(X, centered=student.centered))
    return float(np.mean(loss.student_gradient(student.indices(X), y)[0]))


@pytest.mark.parametrize("param", sgd.PARAMETRISATIONS)
@pytest.mark.parametrize(("link", "T"), [("softmax", 3), ("h3", 1), ("h2", 2)])
def test_sgd_gradient_equals_finite_differences(param, link, T):
    """The contraction formulas of each parametrisation against a directional derivative."""
    spec = sgd.ProblemSpec(param, link, T, 12, rho=0.5, student_rho=0.5, beta=1.3)
    student, teacher, rng = sgd.initial_problem(spec, seed=4)
    loss = spec.loss()
    X = rng.standard_normal((5, T, 12))
    student.indices(X)
    y = loss.teacher.apply(teacher.indices(X, centered=student.centered))
    _, g = loss.student_gradient(student.indices(X), y)
    grads = student.gradient(X, g)
    directions = [rng.standard_normal(theta.shape) for theta in student.parameters()]
    analytic = sum(float(np.sum(gr * e)) for gr, e in zip(grads, directions))
    eps = 1e-6
    values = []
    for sign in (1.0, -1.0):
        for theta, e in zip(student.parameters(), directions):
            theta += sign * eps * e
        values.append(_batch_loss(student, teacher, loss, X))
        for theta, e in zip(student.parameters(), directions):
            theta -= sign * eps * e
    assert analytic == pytest.approx((values[0] - values[1]) / (2 * eps), rel=1e-6)


def test_index_of_each_parametrisation_matches_the_dense_matrix():
    for param in sgd.PARAMETRISATIONS:
        spec = sgd.ProblemSpec(param, "h2", 3, 10, student_rho=0.5)
        student, teacher, rng = sgd.initial_problem(spec, seed=1)
        X = rng.standard_normal((4, 3, 10))
        dense = DenseMatrix(student.matrix().dense())
        np.testing.assert_allclose(student.indices(X), dense.indices(X, centered=student.centered),
                                   rtol=1e-12, atol=1e-12)


def test_unit_variance_normalisation_is_exact():
    for param in sgd.PARAMETRISATIONS:
        spec = sgd.ProblemSpec(param, "h3", 1, 40, student_rho=1.0 if param == "untied" else None)
        student, teacher, _ = sgd.initial_problem(spec, seed=0)
        tr = sgd.OrderParameters(*sgd.trace_products([student.matrix(), teacher]))
        np.testing.assert_allclose(np.diag(tr.Psi + tr.Omega), [1.0, 1.0], rtol=1e-12)


def test_same_seed_gives_identical_trajectories_and_seeds_are_independent_of_the_grid():
    spec = sgd.ProblemSpec("tied", "h2", 1, 30)
    settings = sgd.SGDSettings(lr=0.01, batch=32, horizon=0.4, n_records=5)
    a = sgd.SGDRun(spec, settings, 3).run()
    assert not a.blew_up and len(a) == 5
    b = sgd.SGDRun(spec, settings, 3).run()
    np.testing.assert_array_equal(a.order, b.order)
    np.testing.assert_array_equal(a.extra["batch_loss"], b.extra["batch_loss"])
    c = sgd.SGDRun(spec, settings, 4).run()
    assert not np.array_equal(a.order[1:], c.order[1:])
    # the teacher of replicate 3 does not depend on the parametrisation or the link
    _, teacher_tied, _ = sgd.initial_problem(spec, 3)
    _, teacher_direct, _ = sgd.initial_problem(sgd.ProblemSpec("direct", "h1", 1, 30), 3)
    np.testing.assert_array_equal(teacher_tied.left, teacher_direct.left)


@pytest.mark.parametrize(("param", "factor"), [("tied", 4.0), ("direct", 1.0), ("untied", 1.0)])
def test_time_accounting_of_minibatch_steps(param, factor):
    """t_ode = n·c·α/d, n_samples = B·n, t_fast = α·n (docs/paper2.md §2, §2.4)."""
    spec = sgd.ProblemSpec(param, "h1", 1, 20, student_rho=1.0 if param == "untied" else None)
    lr, B = 0.01, 8
    settings = sgd.SGDSettings(lr=lr, batch=B, horizon=0.05, n_records=6)
    tr = sgd.SGDRun(spec, settings, 0).run()
    n = tr.extra["n_steps"]
    assert n[-1] == round(0.05 / (factor * lr / 20))
    np.testing.assert_allclose(tr.t_ode, n * factor * lr / 20, rtol=1e-15)
    np.testing.assert_array_equal(tr.extra["n_samples"], B * n)
    np.testing.assert_allclose(tr.extra["t_fast"], lr * n, rtol=1e-15)
    if param == "untied":
        assert set(tr.extra) >= {"tA", "tB"}


def test_blow_up_is_detected_recorded_and_round_trips(tmp_path):
    spec = sgd.ProblemSpec("tied", "h3", 1, 30)
    tr = sgd.SGDRun(spec, sgd.SGDSettings(lr=5.0, batch=4, horizon=20.0, n_records=11), 0).run()
    assert tr.blew_up and 0 < tr.t_blowup < 20.0
    assert np.all(np.isfinite(tr.order)) and tr.t_ode[-1] <= tr.t_blowup
    path = tmp_path / "run.csv"
    write_table(path, tr.columns())
    back = Trajectory.from_columns(read_table(path), d=30)
    assert back.blew_up and back.t_blowup == tr.t_blowup
    np.testing.assert_array_equal(back.order, tr.order)
    np.testing.assert_array_equal(back.extra["n_steps"], tr.extra["n_steps"])


def test_stop_overlap_ends_the_run_at_recovery():
    spec = sgd.ProblemSpec("tied", "h1", 1, 40)
    settings = sgd.SGDSettings(lr=0.05, batch=32, horizon=5.0, n_records=51, stop_overlap=0.4)
    tr = sgd.SGDRun(spec, settings, 0).run()
    assert not tr.blew_up and tr.t_ode[-1] < 5.0
    assert tr.overlap_ratio[-1] >= 0.4 > tr.overlap_ratio[-2]


def test_first_crossing_time_interpolates():
    assert first_crossing_time([0, 1, 2], [0.0, 0.2, 0.6], 0.3) == pytest.approx(1.25)
    assert first_crossing_time([0, 1], [0.0, 0.1], 0.3) is None
    assert first_crossing_time([0, 1], [0.5, 0.1], 0.3) == 0.0


def test_problem_spec_names_bad_arguments():
    with pytest.raises(ValueError, match="param must be one of"):
        sgd.ProblemSpec("lowrank", "h2", 1, 10)
    with pytest.raises(ValueError, match="T must be >= 2 for link 'softmax'"):
        sgd.ProblemSpec("tied", "softmax", 1, 10)
    with pytest.raises(ValueError, match="no SGD dynamics"):
        sgd.ProblemSpec("tied", "hardmax", 2, 10)
    with pytest.raises(ValueError, match="teacher_mean applies to untied"):
        sgd.ProblemSpec("tied", "h2", 1, 10, teacher_mean=1.0)
    with pytest.raises(ValueError, match="lr must be a finite number > 0"):
        sgd.SGDSettings(lr=0.0, batch=1, horizon=1.0)
    # a hardmax teacher with a softmax student is a valid (mismatched) problem
    spec = sgd.ProblemSpec("tied", "softmax", 2, 10, teacher_link="hardmax", beta=4.0)
    assert isinstance(spec.loss(), MSELoss) and spec.loss().teacher == make_link("hardmax")


def test_weight_decay_shrinks_the_student_as_in_the_update_rule():
    """With a zero learning signal (teacher = student link, γ > 0), ‖W‖ decays like (1 − αγ/d)^n."""
    spec = sgd.ProblemSpec("tied", "h1", 1, 20)
    student, teacher, rng = sgd.initial_problem(spec, 0)
    W0 = student.W.copy()
    zero_loss = MSELoss(make_link("h1"), make_link("h1"), prefactor=1e-300)
    settings = sgd.SGDSettings(lr=0.1, batch=2, horizon=0.2, weight_decay=3.0, n_records=2)
    sgd.run_sgd(student, teacher, zero_loss, 1, settings, rng)
    n = settings.n_steps(sgd.step_time("tied", 0.1, 20))
    np.testing.assert_allclose(student.W, W0 * (1 - 0.1 * 3.0 / 20) ** n, rtol=1e-12)
    assert math.isfinite(float(np.sum(student.W)))
