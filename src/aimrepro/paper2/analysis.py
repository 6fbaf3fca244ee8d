"""Measurements on trajectories of paper 2, shared by the claims and the figures.

Weak recovery and escape times, the initial slope of the overlap, and the
student mean of untied attention, each read off a
:class:`~aimrepro.paper2.trajectory.Trajectory` (an SGD run or a flow).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aimrepro.paper2.trajectory import Trajectory, first_crossing_time

__all__ = ["escape_time", "initial_slope", "mean_at", "recovery_summary", "student_mean"]


def initial_slope(run: Trajectory, *, window: float = 0.1,
                  min_records: int = 5) -> float:
    """dp₁₂/dt at t = 0 from a quadratic fit of p₁₂ over the records with t ≤ window.

    The window widens to the first ``min_records`` records on coarse grids.
    """
    if len(run) >= min_records:
        window = max(window, float(run.t_ode[min_records - 1]))
    keep = run.t_ode <= window + 1e-12
    if keep.sum() < 4:
        raise ValueError(f"need >= 4 records with t <= {window} to fit a slope, got {keep.sum()}")
    return float(np.polyfit(run.t_ode[keep], run.p12[keep], 2)[1])


def recovery_summary(runs: Sequence[Trajectory], threshold: float) -> dict:
    """Weak-recovery times (t_ode) and sample counts of replicates; NaN where not reached.

    Reference flows have no sample counts: their ``samples`` are NaN.
    """
    def samples(run: Trajectory) -> float:
        if "n_samples" not in run.extra:
            return np.nan
        n = run.weak_recovery_samples(threshold)
        return np.nan if n is None else n

    times = np.array([np.nan if (t := run.weak_recovery_time(threshold)) is None else t
                      for run in runs])
    return {"times": times, "samples": np.array([samples(run) for run in runs]),
            "n_recovered": int(np.isfinite(times).sum()), "n_runs": len(runs),
            "n_blowups": sum(run.blew_up for run in runs)}


def student_mean(run: Trajectory) -> np.ndarray:
    """m = Tr M₁/√d = √d t₁ over time."""
    return math.sqrt(run.d) * run.column("t1")


def escape_time(run: Trajectory, threshold: float) -> float:
    """First slow time τ with |symmetric overlap| ≥ threshold (interpolated); NaN if never."""
    t = first_crossing_time(run.t_ode, np.abs(run.symmetric_overlap), threshold)
    return math.nan if t is None else t


def mean_at(run: Trajectory, t_fast: float) -> float:
    """The student mean at fast time t (linear interpolation; NaN past the run's end)."""
    t = run.t_ode * run.d
    if t_fast > t[-1] + 1e-12:
        return math.nan
    return float(np.interp(t_fast, t, student_mean(run)))
