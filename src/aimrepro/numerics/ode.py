"""ODE helpers of the flows: record times, blow-up events, and a stiff solver.

:func:`check_times` and :func:`blowup_event` serve every flow of paper 2
(``solve_ivp`` or :func:`solve_ros2`).

The stiff solver :func:`solve_ros2` is a second-order Rosenbrock method (ROS2) with error
control that treats implicitly only the stiff part of the right-hand side,
given as a rank-one Jacobian; everything else is explicit.  It integrates the
untied population flow of paper 2 (``aimrepro.paper2.untied.slow``), whose
fast direction (the student mean) relaxes about d times faster than the
slow moments, at a cost set by the slow dynamics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class _Solution:
    """The parts of a ``solve_ivp`` result the trajectory builders read."""

    t: np.ndarray
    y: np.ndarray
    status: int
    nfev: int
    t_events: list
    message: str = ""
    y_events: list | None = None


def solve_ros2(fun, stiff_part, y0: np.ndarray, times: np.ndarray, *, rtol: float = 1e-6,
               atol: float = 1e-9, max_steps: int = 1_000_000, blowup_norm: float = math.inf,
               stop=None) -> _Solution:
    """Linearly implicit two-stage Rosenbrock W-method (ROS2) with a rank-one Jacobian.

    For y' = f(t, y) with an approximate Jacobian J = −κ w wᵀ (from
    ``stiff_part(t, y)``), each step solves (I − γhJ) k₁ = f(y_n),
    (I − γhJ) k₂ = f(y_n + h k₁) − 2k₁ (Sherman–Morrison, O(n)) and sets
    y_{n+1} = y_n + h(3k₁ + k₂)/2, γ = 1 + 1/√2.  ROS2 is of order 2 for any
    J (a W-method) and L-stable for the exact one, so a rank-one J that
    captures the stiff direction removes the step-size limit it would
    impose on an explicit method (Verwer, Spee, Blom & Hundsdorfer, SIAM J.
    Sci. Comput. 20 (1999) 1456).  The error estimate is the difference to
    the embedded first-order solution, h(k₁ + k₂)/2, in the RMS norm with
    weights atol + rtol|y|; steps land on ``times``.

    Parameters
    ----------
    fun : callable f(t, y)
    stiff_part : callable (t, y) -> (κ ≥ 0, w)
    y0 : (n,) ndarray
    times : increasing array
        Output times; the first is the initial time.
    rtol, atol : float
    max_steps : int
    blowup_norm : float
        Stop with status 1 (a terminal event, as ``solve_ivp`` reports it)
        when ‖y‖ exceeds this.
    stop : callable (t, y) -> bool, optional
        Checked at each output time; True ends the integration there
        (status 0, fewer outputs).

    Returns
    -------
    A result with ``t``, ``y`` (n, k), ``status`` (0 done or stopped, 1
    blow-up, −1 step-size or step-count failure), ``nfev``, ``t_events``.
    """
    gamma = 1.0 + 1.0 / math.sqrt(2.0)
    times = check_times(times)
    t, y = float(times[0]), np.array(y0, dtype=float)
    outputs_t, outputs_y = [t], [y.copy()]
    nfev, steps, h = 0, 0, 1e-4 * float(times[-1] - times[0])
    status, message, t_events = 0, "", [np.empty(0), np.empty(0)]
    for target in times[1:]:
        while t < target and status == 0:
            step = min(h, target - t)
            if steps >= max_steps or step <= 1e-14 * max(1.0, abs(t)):
                status, message = -1, "too many steps or step size underflow"
                break
            kappa, w = stiff_part(t, y)
            c = gamma * step * kappa
            denominator = 1.0 + c * float(w @ w)

            def solve(r):
                return r - (c * float(w @ r) / denominator) * w

            k1 = solve(fun(t, y))
            k2 = solve(fun(t + step, y + step * k1) - 2.0 * k1)
            nfev += 2
            steps += 1
            y_new = y + step * (1.5 * k1 + 0.5 * k2)
            weights = atol + rtol * np.maximum(np.abs(y), np.abs(y_new))
            error = math.sqrt(float(np.mean((0.5 * step * (k1 + k2) / weights) ** 2)))
            if not math.isfinite(error):
                h = 0.2 * step
                continue
            if error <= 1.0:
                t, y = (float(target) if step == target - t else t + step), y_new
                if float(np.linalg.norm(y)) > blowup_norm:
                    status, t_events = 1, [np.array([t]), np.empty(0)]
            h = step * min(5.0, max(0.2, 0.9 / math.sqrt(max(error, 1e-12))))
        if status != 0:
            break
        outputs_t.append(t)
        outputs_y.append(y.copy())
        if stop is not None and stop(t, y):
            break
    return _Solution(np.asarray(outputs_t), np.asarray(outputs_y).T, status, nfev, t_events,
                     message)


def check_times(times) -> np.ndarray:
    """Record times as a float array; raises ValueError unless increasing with ≥ 2 entries."""
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or times.size < 2 or not np.all(np.diff(times) > 0):
        raise ValueError("times must be an increasing 1-D array with at least two entries")
    return times


def blowup_event(limit: float, norm):
    """A terminal ``solve_ivp`` event: the state's ``norm`` reaches ``limit`` (a blow-up)."""
    def event(t, y, *args):
        return limit - norm(y)
    event.terminal = True
    event.direction = -1
    return event
