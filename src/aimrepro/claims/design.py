"""Finite-size trends designed as experiments: which d and how many seeds for a decisive row.

A trend row (:mod:`aimrepro.claims.trends`) fits mean excesses e(d) over a
few sizes d and judges the extrapolation e∞ (``docs/design.md``, "Theory ↔
experiment").  It is decisive only when s.e.(e∞) ≤ tolerance/2.  What that
standard error will be, and what it costs, follows from two laws measured on
a few runs (a pilot, or a smaller scale's results):

* the spread of one run's excess around its mean at size d,
  σ(d) = σ₀ (d/d₀)^(−a) (a = 1 for an O(1/d) fluctuation of a d²-sized
  average, a = 1/2 for an O(d^(−1/2)) one);
* the CPU time of one run, c(d) = c₀ (d/d₀)^b (b ≈ 2 for GAMP-RIE at fixed
  α, whose iterations cost O(n T d²)/d² per sample and n ∝ d², …).

For sizes d_i with n_i independent runs each, the weighted least-squares fit
of e(d) = Σ_k β_k d^(−p_k) (p = (0, 1): e∞ + b/d) has the covariance
(Xᵀ W X)⁻¹ with X_ik = d_i^(−p_k) and W = diag(n_i/σ(d_i)²), so

    s.e.(e∞)² = [(Xᵀ W X)⁻¹]₀₀,        CPU = Σ_i n_i c(d_i).

:func:`design_trend` chooses the sizes among candidates and the seeds per
size that reach a target s.e. at the least CPU (or, when the budget cannot
reach it, the smallest s.e. the budget buys): for every subset of candidate
sizes it adds seeds one at a time where they lower the variance most per
CPU-second, a greedy rule that is optimal up to one run per size for this
convex allocation problem.  Extrapolating a spread law beyond the measured
sizes is a prediction; the design table in ``docs/benchmarks.md`` puts the
predicted s.e. beside the measured one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PowerLaw", "TrendDesign", "design_trend", "extrapolation_se", "fit_power_law"]


@dataclass(frozen=True)
class PowerLaw:
    """y(d) = scale · (d/reference)^exponent, fitted in log-log space.

    ``residual`` is the root-mean-square log residual of the fit (0 for two
    points), a rough measure of how well the law describes the data.
    """

    scale: float
    exponent: float
    reference: float = 100.0
    residual: float = 0.0

    def __call__(self, d) -> np.ndarray | float:
        return self.scale * (np.asarray(d, dtype=float) / self.reference) ** self.exponent

    def to_dict(self) -> dict:
        return {"scale": self.scale, "exponent": self.exponent, "reference": self.reference,
                "residual": self.residual}


def fit_power_law(d: Sequence[float], values: Sequence[float], *, weights: Sequence[float] | None = None,
                  reference: float = 100.0, exponent: float | None = None) -> PowerLaw:
    """Least-squares line of ln y against ln d: y = scale · (d/reference)^exponent.

    Parameters
    ----------
    d, values : sizes and positive values (spreads or CPU seconds); at least
        two distinct sizes unless ``exponent`` is given.
    weights : optional weights of the log residuals (e.g. the number of runs
        behind each value).
    exponent : fix the exponent (e.g. a known complexity) and fit the scale only.
    """
    x = np.log(np.asarray(d, dtype=float) / reference)
    y = np.asarray(values, dtype=float)
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"d and values must be non-empty and of one length, got {len(d)} and {len(values)}")
    if not (np.all(np.isfinite(y)) and np.all(y > 0)):
        raise ValueError(f"values must be finite and > 0 for a power law, got {list(values)}")
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != x.shape or not (np.all(np.isfinite(w)) and np.all(w > 0)):
        raise ValueError("weights must be finite, > 0 and one per size")
    log_y = np.log(y)
    if exponent is None:
        if np.unique(x).size < 2:
            raise ValueError(f"need two distinct sizes to fit an exponent, got d={list(d)}")
        slope, intercept = np.polyfit(x, log_y, 1, w=np.sqrt(w))
    else:
        slope = float(exponent)
        intercept = float(np.sum(w * (log_y - slope * x)) / np.sum(w))
    residual = log_y - (intercept + slope * x)
    rms = float(np.sqrt(np.sum(w * residual ** 2) / np.sum(w)))
    return PowerLaw(float(math.exp(intercept)), float(slope), float(reference), rms)


def _design_matrix(dims: np.ndarray, powers: Sequence[float]) -> np.ndarray:
    return np.stack([dims ** (-float(p)) for p in powers], axis=1)


def extrapolation_se(dims: Sequence[float], seeds: Sequence[float], spread,
                     powers: Sequence[float] = (0.0, 1.0)) -> float:
    """s.e. of e∞ for runs ``seeds[i]`` at ``dims[i]`` with per-run spread ``spread(d)`` (module notes).

    Infinite when the design cannot identify the fit (fewer distinct sizes
    than terms of the form).
    """
    d = np.asarray(dims, dtype=float)
    n = np.asarray(seeds, dtype=float)
    if d.shape != n.shape or np.unique(d).size < len(powers) or np.any(n <= 0):
        return math.inf
    sigma = np.asarray(spread(d), dtype=float)
    X = _design_matrix(d, powers)
    information = X.T @ (X * (n / sigma ** 2)[:, None])
    try:
        covariance = np.linalg.inv(information)
    except np.linalg.LinAlgError:
        return math.inf
    return float(math.sqrt(max(covariance[0, 0], 0.0)))


@dataclass(frozen=True)
class TrendDesign:
    """A chosen design: sizes, runs per size, its predicted s.e.(e∞) and CPU seconds."""

    dims: tuple[int, ...]
    seeds: tuple[int, ...]
    predicted_se: float
    cpu_seconds: float
    target_se: float
    reaches_target: bool

    def to_dict(self) -> dict:
        return {"dims": list(self.dims), "seeds": list(self.seeds), "predicted_se": self.predicted_se,
                "cpu_seconds": self.cpu_seconds, "target_se": self.target_se,
                "reaches_target": self.reaches_target}


def _allocate(dims, spread, cost, powers, budget, target, min_seeds, max_seeds):
    """Greedy seeds for fixed sizes: the next run where it lowers the variance most per CPU-second."""
    dims = np.asarray(dims, dtype=float)
    seeds = np.full(dims.size, min_seeds, dtype=int)
    unit = np.asarray(cost(dims), dtype=float)
    spent = float(np.sum(seeds * unit))
    if spent > budget:
        return None
    se = extrapolation_se(dims, seeds, spread, powers)
    while se > target:
        best, best_gain = None, 0.0
        for i in range(dims.size):
            if seeds[i] >= max_seeds or spent + unit[i] > budget:
                continue
            seeds[i] += 1
            trial = extrapolation_se(dims, seeds, spread, powers)
            seeds[i] -= 1
            gain = (se ** 2 - trial ** 2) / unit[i]
            if gain > best_gain:
                best, best_gain, best_se = i, gain, trial
        if best is None:
            break
        seeds[best] += 1
        spent += unit[best]
        se = best_se
    return seeds, se, spent


def design_trend(candidates: Sequence[int], spread, cost, *, target_se: float, budget: float,
                 powers: Sequence[float] = (0.0, 1.0), n_dims: Sequence[int] = (3,),
                 min_seeds: int = 6, max_seeds: int = 200) -> TrendDesign:
    """The cheapest design over subsets of ``candidates`` that reaches ``target_se`` within ``budget``.

    Parameters
    ----------
    candidates : sizes d to choose from.
    spread, cost : callables d -> per-run spread σ(d) and CPU seconds c(d)
        (e.g. :class:`PowerLaw` fits of measured runs).
    target_se : the s.e.(e∞) to reach (below tolerance/2, with a margin for
        the uncertainty of the spread law).
    budget : CPU seconds the row may spend.
    powers : exponents of the fit form (default e∞ + b/d).
    n_dims : how many sizes a design may have (at least one more than the
        form's terms, so that the χ² test has a degree of freedom).
    min_seeds : runs per size at least (an error of the mean from fewer is
        itself too uncertain for the χ² test).

    Returns the cheapest design that reaches the target; when none does
    within the budget, the one with the smallest s.e. (``reaches_target``
    False).
    """
    if target_se <= 0 or budget <= 0:
        raise ValueError(f"target_se and budget must be > 0, got {target_se!r}, {budget!r}")
    if any(k < len(powers) + 1 for k in n_dims):
        raise ValueError(f"every n_dims must exceed the number of fit terms {len(powers)} (a dof for χ²)")
    best_reaching, best_any = None, None
    for k in n_dims:
        for subset in itertools.combinations(sorted(set(int(d) for d in candidates)), k):
            found = _allocate(subset, spread, cost, powers, budget, target_se, min_seeds, max_seeds)
            if found is None:
                continue
            seeds, se, spent = found
            design = TrendDesign(tuple(subset), tuple(int(s) for s in seeds), float(se), float(spent),
                                 float(target_se), bool(se <= target_se))
            if design.reaches_target:
                if best_reaching is None or design.cpu_seconds < best_reaching.cpu_seconds:
                    best_reaching = design
            elif best_any is None or design.predicted_se < best_any.predicted_se:
                best_any = design
    if best_reaching is not None:
        return best_reaching
    if best_any is None:
        raise ValueError(f"no design fits the budget of {budget:g} CPU-s with {min_seeds} runs per size")
    return best_any
