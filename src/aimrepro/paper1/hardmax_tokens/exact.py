"""The exact Z(y; u) and E[ζ | y, u] of the hardmax label event from Genz CDFs: for spot checks.

Costs up to P! CDF calls per sample (T = 3: ≤ 36, 0.1–2 s); T ≥ 4 is impractical.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
from scipy.special import ndtr
from scipy.stats import multivariate_normal

from .arguments import check_tokens
from .labels import label_constraints

__all__ = ["GENZ_POINTS_PER_DIM", "exact_posterior_mean"]



def _orderings(T):
    pairs = [(a, b) for a in range(T) for b in range(a + 1, T)]
    return list(itertools.permutations(pairs))


@lru_cache(maxsize=512)
def _ordered_constraints(T, winners):
    out = []
    for ordering in _orderings(T):
        L = label_constraints(winners, T, ordering)
        if L is not None:
            out.append(L)
    return out


def exact_posterior_mean(T: int, u: np.ndarray, winners: np.ndarray, *, relative_accuracy: float = 1e-3,
                         seed: int = 0, gradient: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Z(y; u) and E[ζ | y, u] = ∇_u log Z from Genz CDFs (``scipy.stats.multivariate_normal.cdf``).

    The label event is split by the ordering of the P = T(T − 1)/2
    off-diagonal entries: each piece is an orthant of M − 1 independent
    forms W = L(u + ζ) > 0 (:func:`label_constraints`), so
    Z = Σ Φ_Σ(L u) with Σ = L Lᵀ nonsingular, and by the facet identity
    ∂Φ_Σ(b)/∂b_k = φ(b_k/σ_k)/σ_k · Φ_{Σ|k}(b_{−k} − Σ_{−k,k} b_k/Σ_kk), ∇_u = Lᵀ∇_b.
    (Without the split the T(T − 1) row inequalities have rank M − 1 and the
    CDFs are singular: scipy handles them, but ~100 times slower.)

    Accuracy: each CDF call asks for an absolute error
    ``relative_accuracy`` × Z (Z from a first pass at 1e−5), so Z and the
    gradient carry a relative error of about ``relative_accuracy``, unless
    the call reaches :data:`GENZ_POINTS_PER_DIM` × dimension points first
    (labels with Z ≲ 1e−6, where Genz's relative error is typically still
    ~1e−3 but is not guaranteed).
    Cost per sample: up to P! (1 + (M − 1)) CDF calls of dimension M − 1
    (T = 3: ≤ 36 calls, ~0.1–2 s; T ≥ 4 is impractical).  For spot checks only.
    """
    T = check_tokens(T)
    u = np.atleast_2d(np.asarray(u, dtype=float))
    winners = np.atleast_2d(np.asarray(winners))
    if not (0.0 < relative_accuracy < 1.0):
        raise ValueError(f"relative_accuracy must lie in (0, 1), got {relative_accuracy}")
    streams = np.random.SeedSequence(seed).spawn(u.shape[0])
    Z = np.zeros(u.shape[0])
    grad = np.zeros(u.shape) if gradient else None
    for i, (ui, wi) in enumerate(zip(u, winners)):
        rng = np.random.default_rng(streams[i])
        pieces = _ordered_constraints(T, tuple(int(w) for w in wi))
        rough = sum(_mvn_cdf(L @ ui, L @ L.T, 1e-5, rng) for L in pieces)
        abseps = min(1e-5, relative_accuracy * rough) if rough > 0 else 1e-12
        for L in pieces:
            if gradient:
                p, db = _orthant_and_gradient(L, ui, abseps, rng)
                grad[i] += L.T @ db
            else:
                p = _mvn_cdf(L @ ui, L @ L.T, abseps, rng)
            Z[i] += p
    return Z, (grad / Z[:, None] if gradient else None)


#: Cap on the QMC points of one Genz CDF call (per dimension); bounds the cost for labels with tiny Z.
GENZ_POINTS_PER_DIM = 50_000


def _mvn_cdf(b, cov, abseps, rng):
    if b.size == 1:
        return float(ndtr(b[0] / math.sqrt(cov[0, 0])))
    return float(multivariate_normal.cdf(b, cov=cov, abseps=abseps, releps=0.0, rng=rng,
                                         maxpts=GENZ_POINTS_PER_DIM * b.size))


def _orthant_and_gradient(L, u, abseps, rng):
    """P(W < b) and ∂/∂b for W ~ N(0, L Lᵀ), b = L u (one ordering piece)."""
    cov = L @ L.T
    b = L @ u
    p = _mvn_cdf(b, cov, abseps, rng)
    k_dim = b.size
    db = np.zeros(k_dim)
    for k in range(k_dim):
        s_kk = cov[k, k]
        density = math.exp(-0.5 * b[k] * b[k] / s_kk) / math.sqrt(2.0 * math.pi * s_kk)
        if k_dim == 1:
            db[k] = density
            continue
        rest = np.arange(k_dim) != k
        c = cov[rest, k]
        cond_cov = cov[np.ix_(rest, rest)] - np.outer(c, c) / s_kk
        db[k] = density * _mvn_cdf(b[rest] - c * b[k] / s_kk, cond_cov, abseps, rng)
    return p, db
