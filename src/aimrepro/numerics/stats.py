"""Means over independent runs, their errors, and a control variate that changes no expectation.

Shared by the claims (``aimrepro.claims``) and the figures that draw the same
estimates, which may not import each other (``docs/design.md``, "Who may
import whom").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["control_variate_mean", "mean_and_sem"]


def mean_and_sem(values: Sequence[float]) -> tuple[float, float, int]:
    """Mean, error of the mean (std/√n, ddof 1; NaN for one value) and count of the finite values."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    if array.size == 0:
        return math.nan, math.nan, 0
    sem = float(array.std(ddof=1) / math.sqrt(array.size)) if array.size > 1 else math.nan
    return float(array.mean()), sem, int(array.size)


def control_variate_mean(paired: Sequence[float], paired_control: Sequence[float],
                         control: Sequence[float], c: float) -> tuple[float, float, int]:
    """E[G] from n draws of (G_i, A_i) and m ≥ n draws of A (the n paired ones first): mean, s.e., n.

    The estimate mean_n(G − cA) + c mean_m(A) has expectation E[G] for any c,
    and the variance

        Var(D)/n + c² Var(A)/m + 2c Cov(D, A)/m,        D = G − cA,

    (the paired draws are among the m, hence the covariance term), estimated
    from the samples.  It is small when G − cA varies little, i.e. when A
    tracks the draw-to-draw part of G, and A is cheap enough for m ≫ n
    (``docs/paper1.md`` §8.6: GAMP-RIE on the datasets of gradient descent).
    The s.e. is NaN with fewer than two pairs or a sampled variance that is
    not positive.
    """
    g, a_paired, a_all = (np.asarray(v, dtype=float) for v in (paired, paired_control, control))
    n, m = g.size, a_all.size
    if n != a_paired.size or m < n:
        raise ValueError(f"need one control value per paired draw and at least as many control draws: "
                         f"{n}, {a_paired.size}, {m}")
    if n == 0:
        return math.nan, math.nan, 0
    difference = g - c * a_paired
    estimate = float(difference.mean() + c * a_all.mean())
    if n < 2:
        return estimate, math.nan, n
    covariance = float(np.cov(difference, a_paired, ddof=1)[0, 1])
    variance = difference.var(ddof=1) / n + c * c * a_all.var(ddof=1) / m + 2.0 * c * covariance / m
    return estimate, (math.sqrt(variance) if variance > 0 else math.nan), n
