"""Finite-size trends: simulation against theory over several d, judged on the trend.

A theory of the papers is a d → ∞ statement; a simulation at finite d
carries a correction that shrinks with d.  A claim "the algorithm follows
the theory" is therefore judged on measurements at several sizes
(docs/design.md, "Theory ↔ experiment"): at each d the mean excess
e(d) = simulation − theory over independent runs and its error of the mean
s(d) (not the seed spread), then the weighted least-squares fit

    e(d) = e∞ + b/d,

which is what a leading O(1/d) correction gives.  The row reports every
per-d number, the fit's χ² (is the 1/d form consistent with the errors of
the mean?) and the extrapolation e∞ ± its standard error, and passes when
the 1/d form is consistent and e∞ lies within the stated tolerance.

When the 1/d form is rejected (χ² p < :data:`MIN_P_VALUE`) and the sizes
leave a degree of freedom for one more term, the next order of the same
expansion is added, e(d) = e∞ + b/d + c/d² (:func:`fit_trend`): a rule
fixed before any measurement, never chosen per row.  The extra term widens
s.e.(e∞), so it cannot make a row pass that the data do not support; the row
says which form it used.  A row whose data fit neither form keeps the 1/d
fit, flagged inconsistent.

An extrapolation whose standard error is comparable to the tolerance would
pass almost whatever the data (|e∞| ≤ tolerance + 2 s.e.); such a trend is
not decisive (s.e.(e∞) > tolerance/2), and its row is informational, saying
that more seeds or sizes are needed (:func:`judge_trend`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from aimrepro.claims.table import FAIL, INFORMATIONAL, PASS
from aimrepro.numerics.stats import mean_and_sem

__all__ = ["FiniteSizeTrend", "fit_finite_size", "fit_trend", "judge_extrapolation", "judge_trend", "log_slope",
           "line_at_zero", "mean_and_sem", "NOT_DECISIVE", "excess_verdict"]

#: The χ² p-value below which the 1/d form is rejected.
MIN_P_VALUE = 0.01


def line_at_zero(x: np.ndarray, y: np.ndarray, sem: np.ndarray) -> tuple[float, float, float]:
    """Weighted least-squares line y = a + b x: a, its standard error, b.

    The extrapolation to x → 0 of a quantity measured at a few step sizes
    (an O(lr) bias); weights 1/sem², unit weights when an error is missing.
    """
    x, y, sem = (np.asarray(v, dtype=float) for v in (x, y, sem))
    w = 1.0 / sem ** 2 if np.all(np.isfinite(sem)) and np.all(sem > 0) else np.ones_like(x)
    design = np.stack([np.ones_like(x), x], axis=1)
    cov = np.linalg.inv(design.T @ (design * w[:, None]))
    coef = cov @ (design.T @ (w * y))
    return float(coef[0]), math.sqrt(max(float(cov[0, 0]), 0.0)), float(coef[1])


@dataclass(frozen=True)
class FiniteSizeTrend:
    """The fit e(d) = e∞ + b/d of mean excesses with their errors of the mean.

    Attributes
    ----------
    d, mean, sem, n : tuple
        Per size: the dimension, the mean excess, its error of the mean, the
        number of runs.
    limit, limit_se : float
        e∞ and its standard error (from the weighted fit, scaled by √(χ²/dof)
        when χ²/dof > 1, so that an unexplained scatter widens it).
    slope : float
        b.
    chi2 : float
        Σ ((e − fit)/s)² over the sizes; ``dof`` = number of sizes − number of terms.
    p_value : float
        P(χ²_dof ≥ chi2); NaN with no degree of freedom.
    curvature : float
        c of a fit e∞ + b/d + c/d² (``powers`` (0, 1, 2)); 0 for the 1/d form.
    powers : tuple of int
        The exponents of the form's terms d^(−p): (0, 1), or (0, 1, 2).
    """

    d: tuple[int, ...]
    mean: tuple[float, ...]
    sem: tuple[float, ...]
    n: tuple[int, ...]
    limit: float
    limit_se: float
    slope: float
    chi2: float
    dof: int
    p_value: float
    curvature: float = 0.0
    powers: tuple[int, ...] = (0, 1)

    @property
    def consistent(self) -> bool:
        """The 1/d form fits the errors of the mean (p ≥ :data:`MIN_P_VALUE`, or no dof to test)."""
        return not self.p_value < MIN_P_VALUE

    def within(self, tolerance: float) -> bool:
        """|e∞| ≤ tolerance + 2 se(e∞): the extrapolation is compatible with the tolerance."""
        return abs(self.limit) <= tolerance + 2.0 * self.limit_se

    def decisive(self, tolerance: float) -> bool:
        """The extrapolation can tell: s.e.(e∞) ≤ tolerance/2 (else ``within`` holds for most data)."""
        return self.limit_se <= tolerance / 2

    def shrinks(self) -> bool:
        """|e| at the largest d is below |e| at the smallest d by more than their combined error."""
        first, last = 0, len(self.d) - 1
        combined = math.hypot(self.sem[first], self.sem[last])
        return abs(self.mean[last]) < abs(self.mean[first]) - combined or \
            abs(self.mean[last]) <= combined

    def per_d_text(self, digits: int = 3) -> str:
        """``d = 50: 0.021 ± 0.004 (8 runs); d = 100: ...``"""
        return "; ".join(f"d = {d}: {m:.{digits}g} ± {s:.2g} ({n} runs)"
                         for d, m, s, n in zip(self.d, self.mean, self.sem, self.n))

    @property
    def form(self) -> str:
        """The fitted form in words: ``e∞ + b/d`` or ``e∞ + b/d + c/d²``."""
        return "e∞ + b/d + c/d²" if 2 in self.powers else "e∞ + b/d"

    def fit_text(self, digits: int = 3) -> str:
        p = "n/a" if math.isnan(self.p_value) else f"{self.p_value:.2g}"
        curvature = f", c = {self.curvature:.{digits}g}" if 2 in self.powers else ""
        # with as many sizes as terms the fit passes through every point: there is no χ² to quote
        form_test = (f"χ²/dof = {self.chi2:.2g}/{self.dof} (p = {p})" if self.dof >= 1
                     else "no χ² (as many sizes as terms: the form is not tested)")
        return (f"fit {self.form}: e∞ = {self.limit:.{digits}g} ± {self.limit_se:.2g}, "
                f"b = {self.slope:.{digits}g}{curvature}, {form_test}")


def fit_finite_size(d: Sequence[int], mean: Sequence[float], sem: Sequence[float],
                    n: Sequence[int] | None = None, *, powers: Sequence[int] = (0, 1)) -> FiniteSizeTrend:
    """Weighted least-squares fit of mean excesses e(d) = e∞ + b/d (or + c/d² with ``powers`` (0, 1, 2)).

    Parameters
    ----------
    d : sequence of int
        At least as many distinct sizes as the form has terms.
    mean, sem : sequence of float
        Mean excess and its error of the mean at each size; every error must
        be finite and > 0 (one run gives no error of the mean: use more).
    n : sequence of int, optional
        Runs per size, for the report.
    powers : (0, 1) or (0, 1, 2)
        The form's terms d^(−p).

    Returns
    -------
    FiniteSizeTrend
    """
    powers = tuple(int(p) for p in powers)
    if powers not in ((0, 1), (0, 1, 2)):
        raise ValueError(f"powers must be (0, 1) or (0, 1, 2), got {powers}")
    d_arr = np.asarray(d, dtype=float)
    e = np.asarray(mean, dtype=float)
    s = np.asarray(sem, dtype=float)
    if d_arr.ndim != 1 or not (d_arr.size == e.size == s.size) or np.unique(d_arr).size < len(powers):
        raise ValueError(f"need at least {len(powers)} distinct sizes with one mean and error each, "
                         f"got d={list(d)}")
    if not (np.all(np.isfinite(e)) and np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError(f"every mean must be finite and every error of the mean finite and > 0, "
                         f"got means {list(mean)}, errors {list(sem)}")
    design = np.column_stack([d_arr ** -float(p) for p in powers]) / s[:, None]
    target = e / s
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    covariance = np.linalg.inv(design.T @ design)
    residual = target - design @ coef
    chi2 = float(residual @ residual)
    dof = d_arr.size - len(powers)
    p_value = float(stats.chi2.sf(chi2, dof)) if dof > 0 else math.nan
    inflation = max(1.0, chi2 / dof) if dof > 0 else 1.0
    order = np.argsort(d_arr)
    counts = tuple(int(k) for k in (n if n is not None else [0] * d_arr.size))
    return FiniteSizeTrend(
        d=tuple(int(x) for x in d_arr[order]), mean=tuple(float(x) for x in e[order]),
        sem=tuple(float(x) for x in s[order]), n=tuple(counts[i] for i in order),
        limit=float(coef[0]), limit_se=float(math.sqrt(covariance[0, 0] * inflation)),
        slope=float(coef[1]), chi2=chi2, dof=dof, p_value=p_value,
        curvature=float(coef[2]) if len(powers) == 3 else 0.0, powers=powers)


def fit_trend(d: Sequence[int], mean: Sequence[float], sem: Sequence[float],
              n: Sequence[int] | None = None) -> FiniteSizeTrend:
    """The trend fit of the module notes: e∞ + b/d, or e∞ + b/d + c/d² when 1/d alone is rejected.

    The second form is tried only when the first has p < :data:`MIN_P_VALUE`
    and the sizes leave it a degree of freedom (four sizes or more); it is
    kept when it is consistent, otherwise the 1/d fit comes back (flagged
    inconsistent by :attr:`FiniteSizeTrend.consistent`).
    """
    first = fit_finite_size(d, mean, sem, n)
    if first.consistent or len(set(int(x) for x in d)) < 4:
        return first
    second = fit_finite_size(d, mean, sem, n, powers=(0, 1, 2))
    return second if second.consistent else first


#: The note of a trend row fitted on two sizes: e∞ + b/d then passes through both points, so
#: nothing tests the form and an extrapolation can swing either way (rows of the studies beyond
#: the papers, whose quick sizes are two per trend; the referee scale gives them three).
UNTESTED_FORM = "not decisive: two sizes leave the 1/d form no degree of freedom to test; three sizes decide"


#: The note of a row whose trend cannot decide (:func:`judge_trend`).
NOT_DECISIVE = "not decisive: s.e.(e∞) above tolerance/2, more seeds or sizes needed"


def judge_trend(trend: FiniteSizeTrend, tolerance: float, passed: bool, note: str) -> dict[str, object]:
    """The verdict and note of a trend row: its own check when the trend is decisive, else informational.

    ``passed`` is the row's own check (e.g. ``trend.within(tolerance)`` and
    more); it is kept only when :meth:`FiniteSizeTrend.decisive`, and
    otherwise the note says why the row is not judged.  Returns keyword
    arguments for :func:`aimrepro.claims.table.claim_row`.
    """
    return judge_extrapolation(trend.limit_se, tolerance, passed, note)


def judge_extrapolation(standard_error: float, tolerance: float, passed: bool,
                        note: str) -> dict[str, object]:
    """:func:`judge_trend` for any extrapolation (to d → ∞, or a line to lr → 0) with its s.e.

    Decisive when s.e. ≤ tolerance/2; a NaN s.e. (too few points to estimate
    it) is not decisive either.
    """
    if standard_error <= tolerance / 2:
        return {"passed": bool(passed), "note": note}
    return {"verdict": INFORMATIONAL,
            "note": f"{note}; {NOT_DECISIVE} (s.e.(e∞) = {standard_error:.2g}, tolerance "
                    f"{tolerance:.3g})"}


def excess_verdict(fit: FiniteSizeTrend, tolerance: float) -> tuple[str, str]:
    """Verdict and words of an "algorithm minus theory" trend: informational when not decisive,
    pass when the 1/d form fits and e∞ is within the tolerance, FAIL otherwise."""
    if not fit.decisive(tolerance):
        return INFORMATIONAL, NOT_DECISIVE
    if fit.consistent and fit.within(tolerance):
        return PASS, "the excess is consistent with a 1/d correction vanishing as d grows"
    return FAIL, "the excess does not extrapolate to the SE within the tolerance"


def log_slope(times: Mapping[int, np.ndarray]) -> tuple[float, float, list[tuple[int, float, float, int]]]:
    """Weighted least-squares slope of the per-d mean against ln d, its s.e., and the per-d stats.

    A time that grows with d on the log d scale (an escape from an O(d^{-1/2})
    overlap, ``docs/paper2.md`` §5.2) has a positive slope; the s.e. is
    inflated by √(χ²/dof) when the line does not fit the errors of the mean.
    Per-d rows are (d, mean, s.e., count).
    """
    dims = sorted(times)
    rows = [(d, *mean_and_sem(times[d])) for d in dims]
    x = np.log([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    s = np.array([r[2] for r in rows])
    positive = np.isfinite(s) & (s > 0)
    if not positive.any():
        # no replicate spread at any d (e.g. every flow censored at the horizon): no error bar
        slope = float(np.polyfit(x, y, 1)[0]) if len(dims) >= 2 else math.nan
        return slope, math.nan, rows
    s = np.where(positive, s, np.max(s[positive]))
    w = 1.0 / s ** 2
    design = np.stack([np.ones_like(x), x], axis=1)
    cov = np.linalg.inv(design.T @ (design * w[:, None]))
    coef = cov @ (design.T @ (w * y))
    residual = (y - design @ coef) / s
    dof = max(len(dims) - 2, 1)
    inflation = max(1.0, float(residual @ residual) / dof)
    return float(coef[1]), math.sqrt(cov[1, 1] * inflation), rows
