"""Result tables of the moment hierarchy and the measurements read off them (``docs/paper2.md`` §4, §6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aimrepro.paper2 import moment_experiments as me
from aimrepro.paper2 import sgd
from aimrepro.records.tables import read_table, write_table


def test_convergence_horizon_and_exponential_rate_on_known_errors():
    times = np.array([0.1, 0.2, 0.3, 0.4])
    orders = [2, 4, 6]
    errors = np.array([[1e-2, 1e-1, 1.0, 1.0],
                       [1e-4, 1e-2, 2.0, 0.5],
                       [1e-6, 1e-3, 3.0, np.nan]])       # top order best until t = 0.3
    assert me.convergence_horizon(times, errors, orders, floor=0.0) == pytest.approx(0.3)
    assert me.convergence_horizon(times[:2], errors[:, :2], orders, floor=0.0) is None
    # below the floor the top order counts as converged even if not strictly best
    flat = np.array([[1e-14, 1e-2], [1e-15, 1e-3], [1e-15, 1e-4]])
    assert me.convergence_horizon(times[:2], flat, orders, floor=1e-12) is None
    kappa, r2, n = me.exponential_rate([2, 4, 6, 8], 3.0 * np.exp(-0.7 * np.array([2, 4, 6, 8])),
                                       floor=0.0)
    assert kappa == pytest.approx(0.7) and r2 == pytest.approx(1.0) and n == 4
    assert math.isnan(me.exponential_rate([2, 4], [1e-3, 1e-4], floor=0.0)[0])
    kappa, r2, _ = me.exponential_rate([2, 4, 6], [0.5, 0.5, 0.5], floor=0.0)
    assert kappa == pytest.approx(0.0, abs=1e-12) and math.isnan(r2)
    with pytest.raises(ValueError, match="two increasing orders"):
        me.convergence_horizon(times, errors[:1], [2], floor=0.0)


def test_decay_horizon_is_the_radius_of_a_power_series():
    """Errors (t/R)^M (a Taylor remainder, radius R): κ(t) = ln(R/t) crosses zero at t = R."""
    R = 0.07
    orders = [2, 4, 6, 8]
    times = np.linspace(0.005, 0.12, 47)
    errors = np.array([(times / R) ** m for m in orders])
    assert me.decay_horizon(times, errors, orders, floor=0.0) == pytest.approx(R, rel=0.01)
    # an M-independent prefactor does not move the zero; a floor hides only the smallest errors
    assert me.decay_horizon(times, 3.0 * errors, orders, floor=1e-9) == pytest.approx(R, rel=0.01)
    # still converging at the horizon: no zero
    assert me.decay_horizon(times[:10], errors[:, :10], orders, floor=0.0) is None
    # growing in M from the start (never positive): no zero either, not the first time
    assert me.decay_horizon(times[-5:], errors[:, -5:], orders, floor=0.0) is None


def test_truncation_table_round_trips_and_starts_from_the_sgd_state(tmp_path):
    spec = sgd.ProblemSpec("tied", "softmax", 2, 20, rho=0.5, normalisation="aim")
    times = np.linspace(0.0, 1.2, 7)
    columns, diagnostics = me.truncation_table(spec, 0, times, [2, 3, 4])
    assert diagnostics["converged"] and set(diagnostics["orders"]) == {"2", "3", "4"}
    path = tmp_path / "truncations.csv"
    write_table(path, columns)
    runs = me.read_truncations(read_table(path), 20)
    assert sorted(runs) == [2, 3, 4]
    student, teacher, _ = sgd.initial_problem(spec, 0)
    q11 = np.sum((student.W.T @ student.W) ** 2) / 20
    for trajectory in runs.values():
        assert trajectory.column("Psi11")[0] == pytest.approx(q11, rel=1e-12)
        assert "loss" in trajectory.extra and "t_left_psd" in trajectory.extra
    # order 2: q is frozen (its equation needs words of length 3), the trace moves
    assert np.ptp(runs[2].column("Psi12")) == 0 and np.ptp(runs[2].column("t1")) > 0
    stack = me.stack_truncations([runs], [2, 3, 4], times, me.signed_overlap)
    assert stack.shape == (1, 3, 7) and np.all(np.isfinite(stack[0, 0]))


def test_truncation_error_table_against_the_riccati_solution():
    spec = sgd.ProblemSpec("tied", "linear", 1, 30, rho=0.5, normalisation="aim",
                           loss_prefactor=1.0)
    times = np.array([0.0, 0.01, 0.1, 1.0])
    columns, diagnostics = me.truncation_error_table(spec, 0, times, 5, matrix_scale=0.3)
    assert diagnostics["converged"]
    orders, grid, err = me.error_matrix(columns)
    assert list(orders) == [2, 3, 4, 5] and np.allclose(grid, times)
    assert np.all(err[:, 0] < 1e-15)                      # same initial moments
    assert err[-1, 1] < 1e-3 * err[0, 1]                  # short time: converging in M
    riccati, _ = me.riccati_table(spec, 0, times, matrix_scale=0.3)
    np.testing.assert_allclose(riccati["Psi12"], columns["q12_exact"][columns["order"] == 2])
    with pytest.raises(ValueError, match="linear case"):
        me.truncation_error_table(sgd.ProblemSpec("tied", "h2", 1, 30), 0, times, 4)
    with pytest.raises(ValueError, match="tied"):
        me.initial_state(sgd.ProblemSpec("direct", "h1", 1, 30), 0)
