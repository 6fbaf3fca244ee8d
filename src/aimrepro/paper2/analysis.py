"""Measurements on trajectories of paper 2, shared by the claims and the figures.

Weak recovery and escape times, the initial slope and early change of the
overlap, the samples per unit of paper time, the student mean of untied
attention, the time at which its symmetric fast state loses stability and
the level of a late overlap plateau, each read off a
:class:`~aimrepro.paper2.trajectory.Trajectory` (an SGD run or a flow).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import TIME_FACTOR
from aimrepro.paper2.trajectory import ORDER_NAMES, Trajectory, first_crossing_time
from aimrepro.paper2.untied.fast import MeanLandscape

__all__ = ["RUNAWAY_FACTOR", "escape_time", "initial_slope", "instability_time", "law_run_summary", "mean_at",
           "overlap_change", "plateau_level", "recovery_before_runaway", "recovery_summary", "runaway_time",
           "samples_per_time", "student_mean"]


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


#: A run whose student norm q₁₁ exceeds this many times its initial value has run away (:func:`runaway_time`).
RUNAWAY_FACTOR = 1e3


def runaway_time(run: Trajectory, factor: float = RUNAWAY_FACTOR) -> float:
    """When a run ran away: its blow-up time, or the first record with q₁₁ > factor · q₁₁(0); NaN if never.

    The SGD engine stops on a non-finite or huge *batch loss*; between two
    records a state can also explode while the losses it met stayed below that
    bound (heavy-tailed tokens, ``docs/paper2.md`` §10), and its overlap ratio
    |p₁₂|/p₂₂ then reaches any threshold without any recovery.  Such a record is
    not a measurement.
    """
    q11 = run.order[:, list(ORDER_NAMES).index("Psi11")] if len(run) else np.zeros(0)
    away = np.flatnonzero(~(np.abs(q11) <= factor * abs(q11[0]))) if q11.size else np.zeros(0, int)
    times = [float(run.t_ode[away[0]])] if away.size else []
    if run.blew_up:
        times.append(float(run.t_blowup) if math.isfinite(run.t_blowup) else float(run.t_ode[-1]))
    return min(times) if times else math.nan


def recovery_before_runaway(run: Trajectory, threshold: float) -> tuple[float, float]:
    """(weak-recovery time, runaway time) of a run; a crossing at or after the runaway is no recovery.

    Both NaN where they do not occur.  After a runaway (:func:`runaway_time`)
    the overlap ratio can take any value, so only a first crossing of
    |p₁₂|/p₂₂ ≥ ``threshold`` strictly before it is a weak-recovery time
    (``docs/paper2.md`` §10).  O(records).
    """
    away = runaway_time(run)
    keep = run.t_ode < away if math.isfinite(away) else np.ones(len(run), bool)
    t = first_crossing_time(run.t_ode[keep], np.abs(run.overlap_ratio[keep]), threshold)
    return (math.nan if t is None else float(t)), away


def law_run_summary(seed: int, sgd: Trajectory, gaussian_flow: Trajectory, law_flow: Trajectory,
                    threshold: float) -> dict:
    """One replicate of a token-law run (``docs/paper2.md`` §10): weak-recovery times of SGD and of both flows.

    ``sgd`` ran on tokens of the law; ``gaussian_flow`` and ``law_flow`` start
    from the same initial state (``flows.reference_flow`` with the Gaussian and
    with the law's spec).  A time is NaN where the threshold is not reached;
    ``*_end`` is the last recorded time (the horizon, the stop, or a blow-up).
    An SGD run that ran away (:func:`runaway_time`) counts as blown up there,
    and only a crossing before that counts.
    """
    def time(run: Trajectory) -> float:
        t = first_crossing_time(run.t_ode, np.abs(run.overlap_ratio), threshold)
        return math.nan if t is None else float(t)

    sgd_t_wr, away = recovery_before_runaway(sgd, threshold)
    return {"seed": int(seed), "sgd_t_wr": sgd_t_wr,
            "sgd_end": float(sgd.t_ode[-1]) if len(sgd) else 0.0,
            "blew_up": math.isfinite(away), "t_blowup": away,
            "gaussian_flow_t_wr": time(gaussian_flow), "gaussian_flow_end": float(gaussian_flow.t_ode[-1]),
            "law_flow_t_wr": time(law_flow), "law_flow_end": float(law_flow.t_ode[-1])}


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


def samples_per_time(param: str, *, d: int, lr: float, batch: int) -> float:
    """Samples per unit of the paper's time: d B/(4α) (tied), d B/α (direct; untied τ).

    One step of B samples advances t by :data:`aimrepro.paper2.sgd.TIME_FACTOR` α/d, so a
    flow's time converts to the sample axis of SGD run with this step size and batch
    ([P Fig. 2] draws both parametrisations against samples, ``docs/paper2.md`` §6).
    """
    if param not in TIME_FACTOR:
        raise ValueError(f"param must be one of {tuple(TIME_FACTOR)}, got {param!r}")
    for name, value in (("d", d), ("lr", lr), ("batch", batch)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return d * batch / (TIME_FACTOR[param] * lr)


def overlap_change(run: Trajectory, t: float) -> float:
    """p₁₂(t) − p₁₂(0) (linear interpolation between records); NaN past the run's end."""
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"t must be a finite number >= 0, got {t}")
    if len(run) == 0 or t > run.t_ode[-1] + 1e-12:
        return math.nan
    p12 = run.p12
    return float(np.interp(t, run.t_ode, p12) - p12[0])


def plateau_level(run: Trajectory, start: float) -> float:
    """Mean |symmetric overlap| over the records with τ ≥ ``start``; NaN if there are none."""
    keep = run.t_ode >= start - 1e-12
    if not keep.any():
        return math.nan
    return float(np.mean(np.abs(run.symmetric_overlap[keep])))


def instability_time(run: Trajectory, potential: Potential, teacher_mean: float) -> float:
    """First slow time at which m = 0 stops being a minimum of Φ in m along an untied trajectory.

    At each record the curvature ∂²Φ/∂m²(0) at the record's moments
    (q⁽¹⁾ = Ω, q⁽²⁾ = Ψ) is evaluated (:meth:`MeanLandscape.curvature`); the
    time is where it first reaches 0, linearly interpolated (0 if it is ≤ 0
    at the start, NaN if it stays > 0).  For h₂ at an uninformative state
    the curvature is 3v₁ − v₂ − m₂²: along the uninformative slow flow the
    student variance v₁ shrinks until the symmetric fast state m = 0 loses
    stability, which is when a teacher mean m₂ ≠ 0 lets the overlap escape
    (``docs/paper2.md`` §5.3).

    Cost: two Φ gradients per record.
    """
    if len(run) == 0:
        return math.nan
    curvature = np.array([MeanLandscape(potential, float(teacher_mean), run.at(i).Omega,
                                        run.at(i).Psi).curvature(0.0) for i in range(len(run))])
    t = first_crossing_time(run.t_ode, -curvature, 0.0)
    return math.nan if t is None else t
