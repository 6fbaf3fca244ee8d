"""Hardmax attention with T ≥ 2 tokens: Bayes-optimal state evolution and a GAMP-RIE channel.

``docs/paper1.md`` solves the hardmax output (row-wise one-hot argmax of the
symmetric T×T index matrix h, §1.3) only for T = 2 (§3.4, with the derivative
erratum B1 of §9).  This module gives the state evolution (SE, §3.2) and the
output function g_out of GAMP-RIE (§5) for any T, checked at T = 2 against the
exact channel :class:`aimrepro.paper1.channels.Hardmax2`.  The write-up, with
the measured numbers and costs, is ``docs/paper1.md`` §3.6.

Conventions
-----------
z-scale as in :mod:`aimrepro.paper1.channels`: h is stored as its M = T(T+1)/2
upper-triangular entries z_ab = τ_ab h_ab (τ_aa = 1, τ_{a<b} = √2), each of
variance 2 Q0 under the prior (§1.6).  A *label* is the tuple of row winners
w_a = argmax_b h_ab (the row one-hot y of the data, :func:`winners_from_onehot`).

Scale reduction (derived here)
------------------------------
The label is invariant under h → c h (c > 0) and under the global shift
h → h + c 1 1ᵀ (the direction τ in z-scale).  At the SE overlap q the channel
sees z = ω + √V ζ with ω ~ N(0, 2q I_M), V = 2(Q0 − q), ζ ~ N(0, I_M), so
with u = ω/√V and m = q/Q0

    u ~ N(0, λ I_M),   λ = m/(1 − m),   Z(y; u) = P_ζ(label(u + ζ) = y),
    g_out(y; ω, V) = ∇_ω log Z_out = E[ζ | y, u]/√V,

and the conjugate overlap q̂ = 4α E|g_out|² (§3.2, z-scale) becomes

    q̂ = 2α F_T(m)/(Q0 − q),     F_T(m) = E_{u, y} |E[ζ | y, u]|².

F_T is the Fisher information of the unit-noise channel; it depends on
(ρ, α, Q0) only through m, so one table of F_T serves every (ρ, α).
E[ζ | y, u] is orthogonal to τ (shift invariance); all sums below use the
projection P⊥ζ = ζ − τ̂(τ̂·ζ), τ̂ = τ/T, which removes a pure-noise direction.
Softmax has F = M − 1 for every m (``channels.Softmax.information``).

Nishimori estimator of F_T (no Z_out needed)
--------------------------------------------
Draw (u, ζ₀), set y = label(u + ζ₀).  By the Nishimori identity ζ₀ is a
posterior draw given (u, y); further posterior draws come from rejection
sampling: candidates c ~ N(0, I_M), kept when label(u + c) = y.  For K + 1
conditionally independent posterior draws x_0 = ζ₀, x_1..x_K, the pair mean
U = Σ_{i<j} P⊥x_i·P⊥x_j / (K(K+1)/2) has E[U | u, y] = |E[ζ | y, u]|².
Control variate: the candidates of the *first* block (b₁ per sample, kept or
not) are N(0, I) and independent of (u, ζ₀), so the same pair mean U_c over
{ζ₀, first block} has E[U_c | u, y] = 0; deep inside a label cell every
candidate is kept and U − U_c = 0 exactly.  The estimate is mean(U − β U_c)
with β the regression coefficient of U on U_c (bias O(1/n)).  The expected
number of candidates per posterior draw is E[1/Z(y; u)] = number of possible
labels (25 for T = 3, 218 for T = 4, :func:`possible_labels`), whatever m.

Table and interpolant
---------------------
G_T(x) = F_T(1 − x²)/x with x = √(1 − m) is smooth on [0, 1] (F ∝ λ^{-1/2}
as m → 1: only a boundary layer of the label cells carries information), so
a weighted least-squares Chebyshev polynomial of low degree in x fits the
table; at T = 2 a degree-6 fit to the exact values on the default grid is
within 1e−6 relative down to x = 0.003 (measured; the test asserts 1e−5),
far below the table noise (~1e−3 per node).  The fit is linear in
the table, so its covariance gives the standard error of F at any m, and the
MMSE's standard error follows by the delta method (:func:`solve_se`; a
parametric bootstrap of the coefficients agrees within 5 %, measured).
Large α: MMSE → Q0 (dof/(2α a_T))² with a_T = G_T(0) and dof = min(2ρ − ρ², 1).

g_out for GAMP-RIE (§5)
-----------------------
Per sample E[ζ | y, u] by Rao–Blackwellised importance sampling
(:func:`posterior_moments`): the diagonal entries are integrated
analytically given the off-diagonal ones.  Measured at T = 3 on 10⁴ SE pairs
(CPU, one thread): 256 proposals cost 1.7 s with noise |ĝ − g|² ≈ 0.6–1 % of
|g|²; rejection sampling (:func:`posterior_mean_rejection`) needs ~12 times
more CPU for the same noise; the exact Genz facet formula
(:func:`exact_posterior_mean`) costs 450–700 s.

Costs (CPU, one thread, measured)
---------------------------------
Default table (17 nodes, 2.8·10⁷ samples): T = 3 54 s, T = 4 280 s.  One SE
point with its delta-method error: ~20 ms; a 128-point curve 2–4 s; the
uniqueness scan of :func:`fixed_points` ~0.1 s per point.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import ClassVar

import numpy as np
from numpy.polynomial import chebyshev
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr
from scipy.stats import multivariate_normal

from aimrepro.paper1.channels import (Hardmax2, OutputChannel, _check_overlap, _check_V, _upper_indices, from_z_scale,
                       n_components, tau_vector)
from aimrepro.model import apply_link
from aimrepro.paper1.state_evolution import _mmse_any, solve_se as _solve_generic_se

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

#: Floats per block of rejection candidates (memory cap of one round: 8 bytes × this).
ROUND_FLOATS = 4_000_000

#: Samples per batch of the Fisher-information estimator (memory ~ 60 × M × this bytes).
ESTIMATOR_BATCH = 100_000

#: Candidates a single posterior draw may use before rejection sampling gives up on it.
MAX_CANDIDATES = 1 << 24

#: Margin (in noise units) by which the shifted proposals of :func:`posterior_moments` clear the constraints.
SHIFT_MARGIN = 0.5

#: Default table: nodes, smallest x = √(1 − m), samples n_k = TABLE_N_REFERENCE/x_k, fit degree (report).
TABLE_NODES = 17
TABLE_X_MIN = 0.02
TABLE_N_REFERENCE = 200_000
FIT_DEGREE = 6


# ---------------------------------------------------------------------------
# argument checks


def _check_T(T):
    if not (isinstance(T, (int, np.integer)) and T >= 2):
        raise ValueError(f"T must be an integer >= 2, got {T!r}")
    return int(T)


def _check_m(m):
    m = float(m)
    if not (0.0 <= m < 1.0):
        raise ValueError(f"m = q/Q0 must satisfy 0 <= m < 1, got {m}")
    return m


def _check_positive_int(name, value, minimum=1):
    if not (isinstance(value, (int, np.integer)) and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# ---------------------------------------------------------------------------
# label map


def winners_from_z(z: np.ndarray, T: int) -> np.ndarray:
    """Row winners w_a = argmax_b h_ab of h = from_z_scale(z): (..., M) → (..., T) int (§1.3).

    Ties have probability zero under every continuous law used here; argmax
    breaks them towards the lower index.  O(T²) per sample.
    """
    T = _check_T(T)
    return np.argmax(from_z_scale(z, T), axis=-1)


def winners_from_onehot(y: np.ndarray) -> np.ndarray:
    """Row winners of one-hot labels y (..., T, T), as produced by ``model.apply_link(h, "hardmax")``."""
    y = np.asarray(y, dtype=float)
    if y.ndim < 2 or y.shape[-1] != y.shape[-2]:
        raise ValueError(f"y must have shape (..., T, T), got {y.shape}")
    return np.argmax(y, axis=-1)


def onehot_from_winners(winners: np.ndarray, T: int) -> np.ndarray:
    """One-hot labels (..., T, T) of row winners (..., T)."""
    T = _check_T(T)
    winners = np.asarray(winners)
    return (winners[..., None] == np.arange(T)).astype(float)


def label_codes(winners: np.ndarray, T: int) -> np.ndarray:
    """Integer code Σ_a w_a T^a of each label (..., T) → (...)."""
    return np.asarray(winners) @ (T ** np.arange(T))


def _is_possible(winners) -> bool:
    """A label is possible iff the map a → w_a has no cycle of length ≥ 3.

    Along a cycle a_1 → a_2 → … → a_k → a_1 with k ≥ 3, row a_i's winner
    beats the entry it shares with the previous row:
    h_{a_i a_{i+1}} > h_{a_i a_{i−1}} = h_{a_{i−1} a_i}, and going once round
    the cycle gives h_{a_1 a_2} > h_{a_1 a_2}.  Fixed points (diagonal
    winners) and 2-cycles (a shared off-diagonal winner) are possible, and so
    is every map whose cycles are of these kinds (tested by sampling).
    """
    T = len(winners)
    for start in range(T):
        seen = [start]
        a = winners[start]
        while a not in seen:
            seen.append(a)
            a = winners[a]
        cycle = len(seen) - seen.index(a)
        if cycle >= 3:
            return False
    return True


@lru_cache(maxsize=8)
def possible_labels(T: int) -> np.ndarray:
    """All possible labels as rows of winners (k, T), in increasing code order.

    k = 4, 25, 218 for T = 2, 3, 4 (the T = 3 cyclic patterns (1, 2, 0) and
    (2, 0, 1) are the only impossible ones there).  O(T^T · T²).
    """
    T = _check_T(T)
    out = np.array([w for w in itertools.product(range(T), repeat=T) if _is_possible(w)], dtype=int)
    return out[np.argsort(label_codes(out, T))]


def label_constraints(winners, T: int, ordering=None) -> np.ndarray:
    """Rows ℓ of the linear constraints ℓ·z > 0 that make label(z) = winners (z-scale).

    Without ``ordering``: the T(T − 1) row inequalities h_{a w_a} > h_{ab}
    (b ≠ w_a), of rank M − 1 (τ is in their null space), so the event is not
    an orthant of these forms.  With ``ordering`` (a permutation of the
    off-diagonal pairs, largest first): the event intersected with that
    ordering of the off-diagonal entries, written with M − 1 independent
    constraints — P − 1 ordering inequalities and one inequality per row on
    its diagonal entry — or None if the ordering contradicts the label
    (:func:`exact_posterior_mean` sums over orderings).
    """
    T = _check_T(T)
    rows, cols, tau = _upper_indices(T)
    M = rows.size
    index = {}
    for k, (a, b) in enumerate(zip(rows, cols)):
        index[(a, b)] = index[(b, a)] = k

    def difference(big, small):
        ell = np.zeros(M)
        ell[index[big]] += 1.0 / tau[index[big]]
        ell[index[small]] -= 1.0 / tau[index[small]]
        return ell

    winners = [int(w) for w in winners]
    if ordering is None:
        return np.array([difference((a, winners[a]), (a, b)) for a in range(T) for b in range(T) if b != winners[a]])
    rank = {pair: r for r, pair in enumerate(ordering)}
    constraints = [difference(ordering[r], ordering[r + 1]) for r in range(len(ordering) - 1)]
    for a in range(T):
        row_pairs = sorted((tuple(sorted((a, b))) for b in range(T) if b != a), key=rank.get)
        w = winners[a]
        if w == a:
            constraints.append(difference((a, a), row_pairs[0]))
        else:
            if row_pairs[0] != tuple(sorted((a, w))):
                return None
            constraints.append(difference((a, w), (a, a)))
    return np.array(constraints)


# ---------------------------------------------------------------------------
# SE pairs and rejection sampling of posterior noise


def scaled_variance(m: float) -> float:
    """λ = m/(1 − m): the variance of each component of u = ω/√V at m = q/Q0."""
    m = _check_m(m)
    return m / (1.0 - m)


@dataclass(frozen=True)
class SEPairs:
    """Draws of the SE's (ω, y) in unit-noise form: ω = √V u, z = √V (u + ζ), y = label(u + ζ)."""

    u: np.ndarray
    zeta: np.ndarray
    winners: np.ndarray


def sample_se_pairs(T: int, m: float, n: int, rng: np.random.Generator) -> SEPairs:
    """n i.i.d. (u, ζ, winners) at m = q/Q0: u ~ N(0, λ I_M), ζ ~ N(0, I_M) (§3.2 scale reduction).

    In physical units ω = √V u with V = 2 Q0 (1 − m), and u + ζ has the law of
    the teacher's z/√V, i.e. the indices h of §1.6 up to scale.  O(n T²).
    """
    T = _check_T(T)
    m = _check_m(m)
    n = _check_positive_int("n", n)
    rng = _check_rng(rng)
    M = n_components(T)
    u = math.sqrt(m / (1.0 - m)) * rng.standard_normal((n, M))
    zeta = rng.standard_normal((n, M))
    return SEPairs(u, zeta, winners_from_z(u + zeta, T))


@dataclass(frozen=True)
class PosteriorDraws:
    """Per-sample sums of posterior draws of ζ given (u, y), all projected on τ⊥.

    ``draw_sum``/``draw_sq``/``count``: Σ P⊥x, Σ|P⊥x|² and the number of kept
    candidates x (each an exact posterior draw); ``first_sum``/``first_sq``:
    the same over *all* ``first_block`` candidates of the first round (a
    mean-zero control); ``n_candidates``: candidates drawn in total.
    """

    draw_sum: np.ndarray
    draw_sq: np.ndarray
    count: np.ndarray
    first_sum: np.ndarray
    first_sq: np.ndarray
    first_block: int
    n_candidates: int
    exhausted: np.ndarray


def _projected_sums(x, keep, tau_hat):
    """Σ_keep P⊥x and Σ_keep |P⊥x|² over axis 1 of x (P, b, M)."""
    along = x @ tau_hat
    sq = np.sum(x * x, axis=-1) - along * along
    if keep is None:
        s = x.sum(axis=1)
        q = sq.sum(axis=1)
    else:
        s = np.einsum("pb,pbm->pm", keep.astype(float), x)
        q = np.sum(np.where(keep, sq, 0.0), axis=1)
    s -= np.outer(s @ tau_hat, tau_hat)
    return s, q


def posterior_draws(T: int, u: np.ndarray, winners: np.ndarray, rng: np.random.Generator, *,
                    first_block: int = 2, min_draws: int = 1,
                    max_candidates: int = MAX_CANDIDATES) -> PosteriorDraws:
    """Rejection sampling of ζ ~ N(0, I_M) conditioned on label(u + ζ) = winners, for every sample at once.

    Rounds: the first draws ``first_block`` candidates per sample; each later
    round draws a block twice the previous size for the samples that still
    have fewer than ``min_draws`` kept candidates (blocks shrink to keep one
    round under :data:`ROUND_FLOATS` floats).  Every kept candidate of every
    round is used: given the keep/reject pattern, kept candidates are i.i.d.
    posterior draws, so the stopping rule biases nothing.

    Complexity: the expected number of candidates per posterior draw is
    E[1/Z(y; u)], the number of possible labels when (u, y) follow the SE
    law; O(T²) each.  Samples that reach ``max_candidates`` without enough
    draws are flagged in ``exhausted`` (their sums hold what was found).
    """
    T = _check_T(T)
    rng = _check_rng(rng)
    first_block = _check_positive_int("first_block", first_block)
    min_draws = _check_positive_int("min_draws", min_draws)
    u = np.asarray(u, dtype=float)
    M = n_components(T)
    if u.ndim != 2 or u.shape[1] != M:
        raise ValueError(f"u must have shape (n, {M}) for T={T}, got {u.shape}")
    winners = np.asarray(winners)
    if winners.shape != (u.shape[0], T):
        raise ValueError(f"winners must have shape ({u.shape[0]}, {T}), got {winners.shape}")
    return _posterior_draws(T, u, label_codes(winners, T), rng, first_block, min_draws, max_candidates)


def _posterior_draws(T, u, target, rng, first_block, min_draws, max_candidates):
    n, M = u.shape
    tau_hat = tau_vector(T) / T
    powers = T ** np.arange(T)

    def kept(base, cand, wanted):
        return np.argmax(from_z_scale(base[:, None, :] + cand, T), axis=-1) @ powers == wanted[:, None]

    draw_sum = np.zeros((n, M))
    draw_sq = np.zeros(n)
    first_sum = np.zeros((n, M))
    first_sq = np.zeros(n)
    count = np.zeros(n, dtype=np.int64)
    used = np.zeros(n, dtype=np.int64)
    # the first round, in chunks of samples
    chunk = max(1, ROUND_FLOATS // (first_block * M))
    for lo in range(0, n, chunk):
        sl = slice(lo, min(n, lo + chunk))
        cand = rng.standard_normal((sl.stop - sl.start, first_block, M))
        keep = kept(u[sl], cand, target[sl])
        first_sum[sl], first_sq[sl] = _projected_sums(cand, None, tau_hat)
        draw_sum[sl], draw_sq[sl] = _projected_sums(cand, keep, tau_hat)
        count[sl] = keep.sum(axis=1)
    used += first_block
    pending = np.flatnonzero(count < min_draws)
    block = first_block
    while pending.size:
        block *= 2
        size = max(1, min(block, ROUND_FLOATS // (pending.size * M)))
        chunk = max(1, ROUND_FLOATS // (size * M))
        for lo in range(0, pending.size, chunk):
            idx = pending[lo:lo + chunk]
            cand = rng.standard_normal((idx.size, size, M))
            keep = kept(u[idx], cand, target[idx])
            s, q = _projected_sums(cand, keep, tau_hat)
            draw_sum[idx] += s
            draw_sq[idx] += q
            count[idx] += keep.sum(axis=1)
        used[pending] += size
        pending = pending[(count[pending] < min_draws) & (used[pending] < max_candidates)]
    exhausted = count < min_draws
    return PosteriorDraws(draw_sum, draw_sq, count, first_sum, first_sq, first_block, int(used.sum()), exhausted)


def _pair_mean(total, squares, k):
    """Mean of x_i·x_j over the k(k − 1)/2 pairs i < j, from Σx and Σ|x|² (NaN where k < 2)."""
    pairs = k * (k - 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(k >= 2, (np.sum(total * total, axis=-1) - squares) / (2.0 * np.maximum(pairs, 1.0)), np.nan)


# ---------------------------------------------------------------------------
# the Nishimori estimator of F_T(m)


@dataclass(frozen=True)
class FisherEstimate:
    """F_T(m) = E|E[ζ | y, u]|² estimated by :func:`estimate_fisher`, with its standard error.

    ``beta`` is the control-variate coefficient, ``raw_stderr`` the standard
    error without the control, ``candidates_per_sample`` the rejection cost,
    ``seconds`` the CPU time of the process (meaningful on a shared machine).
    ``n_dropped`` samples had labels so unlikely
    (Z < ~1/:data:`MAX_CANDIDATES`) that rejection sampling gave up; they are
    left out, which biases F by at most (n_dropped/n)(M + 2 ln MAX_CANDIDATES)
    (|E[ζ|y,u]|² ≲ M + 2 ln(1/Z)): below 1e−4 relative whenever n_dropped/n < 1e−6.
    """

    T: int
    m: float
    value: float
    stderr: float
    n_samples: int
    beta: float
    raw_stderr: float
    candidates_per_sample: float
    seconds: float
    n_dropped: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def estimate_fisher(T: int, m: float, n_samples: int, rng: np.random.Generator, *,
                    first_block: int = 2) -> FisherEstimate:
    """Nishimori estimate of F_T(m) (module notes), so that q̂ = 2α F_T(m)/(Q0 − q).

    Parameters
    ----------
    T : tokens; m : q/Q0 in [0, 1); n_samples : number of (u, ζ₀) draws
    rng : the only source of randomness
    first_block : candidates per sample in the first rejection round (the control)

    Returns
    -------
    FisherEstimate
        Unbiased up to the O(1/n) bias of the fitted control coefficient.
        Cost O(n_samples · (first_block + L) · T²) with L = number of possible
        labels; measured CPU per 10⁶ samples: T = 3 ~9 s (m ≤ 0.9), T = 4
        ~60–80 s, both ~1.5 s near m = 1 where few candidates are rejected.
        Per-sample standard deviation (T = 3) 1.6–2.0 for m ≤ 0.9 (about 1.5
        times that of the exact-gradient average), falling like (1 − m)^{1/4}
        near m = 1 while F falls like (1 − m)^{1/2}.
    """
    T = _check_T(T)
    m = _check_m(m)
    n_samples = _check_positive_int("n_samples", n_samples, 2)
    rng = _check_rng(rng)
    first_block = _check_positive_int("first_block", first_block)
    start = time.process_time()
    # sufficient statistics of (U, U_c): n, ΣU, ΣU_c, ΣU², ΣU_c², ΣU U_c
    sums = np.zeros(6)
    candidates = 0
    exhausted = 0
    tau_hat = tau_vector(T) / T
    for lo in range(0, n_samples, ESTIMATOR_BATCH):
        n = min(ESTIMATOR_BATCH, n_samples - lo)
        pairs = sample_se_pairs(T, m, n, rng)
        draws = _posterior_draws(T, pairs.u, label_codes(pairs.winners, T), rng, first_block, 1, MAX_CANDIDATES)
        candidates += draws.n_candidates
        z0 = pairs.zeta - np.outer(pairs.zeta @ tau_hat, tau_hat)
        z0_sq = np.sum(z0 * z0, axis=-1)
        ok = ~draws.exhausted
        U = _pair_mean(draws.draw_sum + z0, draws.draw_sq + z0_sq, draws.count + 1)[ok]
        Uc = _pair_mean(draws.first_sum + z0, draws.first_sq + z0_sq, np.full(n, first_block + 1))[ok]
        exhausted += int(np.sum(~ok))
        sums += [U.size, U.sum(), Uc.sum(), U @ U, Uc @ Uc, U @ Uc]
    count, sU, sC, sUU, sCC, sUC = sums
    mean_U, mean_C = sU / count, sC / count
    var_U = (sUU - count * mean_U**2) / (count - 1)
    var_C = (sCC - count * mean_C**2) / (count - 1)
    cov_UC = (sUC - count * mean_U * mean_C) / (count - 1)
    beta = cov_UC / var_C if var_C > 0 else 0.0
    value = mean_U - beta * mean_C
    var_resid = max(var_U - 2 * beta * cov_UC + beta * beta * var_C, 0.0)
    return FisherEstimate(T, m, float(value), float(math.sqrt(var_resid / count)), int(count), float(beta),
                          float(math.sqrt(var_U / count)), candidates / count, time.process_time() - start,
                          exhausted)


# ---------------------------------------------------------------------------
# the table and its interpolant


def table_grid(n_nodes: int = TABLE_NODES, x_min: float = TABLE_X_MIN) -> np.ndarray:
    """Nodes x_k = √(1 − m_k) on [x_min, 1], Chebyshev–Lobatto spaced (dense near m = 1 and m = 0).

    The default (17 nodes, x_min = 0.02, i.e. m up to 0.9996) covers the SE
    for α up to ~10 at T ≤ 4 without extrapolation; below x_min the fit
    extrapolates (see :class:`FisherFit`).
    """
    n_nodes = _check_positive_int("n_nodes", n_nodes, 2)
    if not (0.0 < x_min < 1.0):
        raise ValueError(f"x_min must lie in (0, 1), got {x_min}")
    k = np.arange(n_nodes)
    return x_min + (1.0 - x_min) * (1.0 - np.cos(np.pi * k / (n_nodes - 1))) / 2.0


def table_samples(x, n_reference: int) -> np.ndarray:
    """Samples per node, n_k = ⌈n_reference/x_k⌉: equal relative error of G = F/x at every node.

    The estimator's per-sample relative spread of G grows like x^{−1/2} as
    x → 0 (only the boundary layer of the label cells carries information)
    while a sample there costs ~10 times less (few rejections), so this
    allocation costs about the same per node (measured, T = 3, 4).
    """
    n_reference = _check_positive_int("n_reference", n_reference, 2)
    x = np.asarray(x, dtype=float)
    return np.ceil(n_reference / x).astype(np.int64)


#: Measured CPU microseconds per estimator sample, averaged over the default grid (one thread;
#: docs/paper1.md §3.6).  The cost is dominated by rejection sampling: ~(possible labels) candidates.
SAMPLE_MICROSECONDS = {2: 0.7, 3: 1.6, 4: 10.0}


def estimated_table_seconds(T: int, n_reference: int, n_nodes: int = TABLE_NODES,
                            x_min: float = TABLE_X_MIN) -> float:
    """Expected CPU seconds of the default table (:func:`table_samples` on :func:`table_grid`).

    Measured per-sample costs for T ≤ 4 (:data:`SAMPLE_MICROSECONDS`); beyond,
    the T = 4 cost scaled by the number of possible labels (the candidates a
    posterior draw needs), which :func:`possible_labels` counts by enumeration.
    Overflow-safe: ``math.inf`` for a T or a sample size beyond the floats
    (``aimrepro se --T 1000000000`` is refused with this estimate, not with an
    OverflowError).
    """
    T = _check_T(T)
    n_reference = _check_positive_int("n_reference", n_reference, 2)
    reference = float(n_reference) if n_reference < 2 ** 1023 else math.inf
    total = float(np.sum(np.ceil(reference / table_grid(n_nodes, x_min))))
    if T in SAMPLE_MICROSECONDS:
        per_sample = SAMPLE_MICROSECONDS[T]
    else:
        # T^T bounds the count where enumerating the maps would itself be slow; in logs,
        # since T^T overflows a float from T = 144 on
        log_labels = math.log(len(possible_labels(T))) if T <= 6 else T * math.log(T)
        log_ratio = log_labels - math.log(len(possible_labels(4)))
        per_sample = SAMPLE_MICROSECONDS[4] * (math.exp(log_ratio) if log_ratio < 700 else math.inf)
    return total * per_sample * 1e-6


@dataclass(frozen=True)
class FisherTable:
    """F_T(m) on a grid x = √(1 − m), from :func:`fisher_table`.

    ``value``/``stderr`` are F and its standard error; ``seed`` and
    ``n_samples`` make the table reproducible bit for bit.
    """

    T: int
    x: np.ndarray
    value: np.ndarray
    stderr: np.ndarray
    n_samples: np.ndarray
    candidates_per_sample: np.ndarray
    seconds: np.ndarray
    seed: int
    first_block: int
    n_dropped: np.ndarray | None = None

    @property
    def m(self) -> np.ndarray:
        return 1.0 - self.x**2

    def columns(self) -> dict:
        dropped = np.zeros(self.x.size, dtype=np.int64) if self.n_dropped is None else self.n_dropped
        return {"x": self.x, "m": self.m, "F": self.value, "F_stderr": self.stderr, "n_samples": self.n_samples,
                "candidates_per_sample": self.candidates_per_sample, "seconds": self.seconds, "n_dropped": dropped}

    @classmethod
    def from_columns(cls, columns, *, T: int, seed: int, first_block: int = 2) -> "FisherTable":
        """The table written by :meth:`columns` (e.g. read back from a CSV file), for :func:`fit_fisher_table`."""
        missing = {"x", "F", "F_stderr", "n_samples"} - set(columns)
        if missing:
            raise ValueError(f"columns must hold x, F, F_stderr and n_samples; missing {sorted(missing)}")
        x = np.asarray(columns["x"], dtype=float)
        zeros = np.zeros(x.size)
        return cls(_check_T(T), x, np.asarray(columns["F"], dtype=float), np.asarray(columns["F_stderr"], dtype=float),
                   np.asarray(columns["n_samples"], dtype=np.int64),
                   np.asarray(columns.get("candidates_per_sample", zeros), dtype=float),
                   np.asarray(columns.get("seconds", zeros), dtype=float), int(seed), int(first_block),
                   np.asarray(columns.get("n_dropped", zeros), dtype=np.int64))


def node_seeds(seed: int, T: int, n_nodes: int) -> list[np.random.SeedSequence]:
    """Independent seed sequences per table node, keyed by (seed, T) so T = 3 and T = 4 tables never share bits."""
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return np.random.SeedSequence(entropy=int(seed), spawn_key=(0x4A7D, int(T))).spawn(n_nodes)


def fisher_table(T: int, x, n_samples, seed: int, *, first_block: int = 2,
                 progress: Callable[[int, int], None] | None = None) -> FisherTable:
    """Estimate F_T at every node x (m = 1 − x²) with :func:`estimate_fisher`, node k seeded by ``node_seeds``.

    ``n_samples`` is one int for every node or one per node.  Cost: the sum of
    the nodes' costs (T = 3: ~20 s per 10⁶ samples; measured values are
    stored in ``seconds``).  ``progress``, if given, is called as
    ``progress(samples_done, samples_total)`` after each node (a progress bar;
    it does not change the table).
    """
    T = _check_T(T)
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 1 or np.any(~(x > 0)) or np.any(x > 1):
        raise ValueError(f"x must be a 1-D grid in (0, 1], got {x}")
    n_samples = np.broadcast_to(np.asarray(n_samples), x.shape)
    total, done = int(np.sum(n_samples)), 0
    estimates = []
    for xk, nk, ss in zip(x, n_samples, node_seeds(seed, T, x.size)):
        estimates.append(estimate_fisher(T, 1.0 - xk * xk, int(nk), np.random.default_rng(ss),
                                         first_block=first_block))
        done += int(nk)
        if progress is not None:
            progress(done, total)
    return FisherTable(T, x, np.array([e.value for e in estimates]), np.array([e.stderr for e in estimates]),
                       np.array([e.n_samples for e in estimates]),
                       np.array([e.candidates_per_sample for e in estimates]),
                       np.array([e.seconds for e in estimates]), int(seed), first_block,
                       np.array([e.n_dropped for e in estimates]))


@dataclass(frozen=True)
class FisherFit:
    """Weighted least-squares Chebyshev fit of G(x) = F_T(1 − x²)/x on x ∈ [0, 1] (module notes).

    ``coef`` are Chebyshev coefficients in t = 2x − 1, ``cov`` their
    covariance from the table's standard errors, ``chi2``/``dof`` the fit's
    weighted residual (chi2/dof ≈ 1 means the polynomial's bias is below the
    noise), ``x_min`` the smallest tabulated x (smaller x is extrapolation).
    Standard errors are multiplied by the Birge ratio max(1, √(chi2/dof)), the
    usual guard when the residuals say the node errors are underestimated.
    """

    T: int
    degree: int
    coef: np.ndarray
    cov: np.ndarray
    chi2: float
    dof: int
    x_min: float

    def G(self, x) -> np.ndarray:
        return chebyshev.chebval(2.0 * np.asarray(x, dtype=float) - 1.0, self.coef)

    def F(self, m) -> np.ndarray:
        """F_T(m) = x G(x), x = √(1 − m)."""
        x = np.sqrt(1.0 - np.asarray(m, dtype=float))
        return x * self.G(x)

    @property
    def error_scale(self) -> float:
        """Birge ratio max(1, √(chi2/dof)) (1 when dof = 0)."""
        return max(1.0, math.sqrt(self.chi2 / self.dof)) if self.dof > 0 else 1.0

    def F_stderr(self, m) -> np.ndarray:
        """Standard error of F_T(m) from the coefficient covariance (exact for a linear fit), times :attr:`error_scale`."""
        x = np.sqrt(1.0 - np.asarray(m, dtype=float))
        basis = chebyshev.chebvander(2.0 * np.atleast_1d(x) - 1.0, self.degree)
        spread = np.sqrt(np.einsum("ki,ij,kj->k", basis, self.cov, basis)).reshape(x.shape)
        return self.error_scale * x * spread

    def to_dict(self) -> dict:
        return {"T": self.T, "degree": self.degree, "coef": self.coef.tolist(), "cov": self.cov.tolist(),
                "chi2": self.chi2, "dof": self.dof, "x_min": self.x_min}


def fit_fisher_table(table: FisherTable, degree: int = FIT_DEGREE) -> FisherFit:
    """Fit G = F/x by weighted least squares (weights 1/stderr²) in the Chebyshev basis of degree ``degree``."""
    degree = _check_positive_int("degree", degree, 0)
    if degree >= table.x.size:
        raise ValueError(f"degree must be < the number of table nodes ({table.x.size}), got {degree}")
    G = table.value / table.x
    sigma = table.stderr / table.x
    if np.any(~(sigma > 0)):
        raise ValueError("every table node needs a positive standard error")
    basis = chebyshev.chebvander(2.0 * table.x - 1.0, degree)
    weighted = basis / sigma[:, None]
    coef, *_ = np.linalg.lstsq(weighted, G / sigma, rcond=None)
    cov = np.linalg.inv(weighted.T @ weighted)
    resid = (basis @ coef - G) / sigma
    return FisherFit(table.T, degree, coef, cov, float(resid @ resid), int(table.x.size - degree - 1),
                     float(table.x.min()))


def exact_fisher_t2(m) -> np.ndarray:
    """F_2(m) from the exact T = 2 channel: ``Hardmax2.information(q, Q0)·(Q0 − q)/2`` (any Q0; §3.4)."""
    channel = Hardmax2()
    m = np.atleast_1d(np.asarray(m, dtype=float))
    return np.array([channel.information(mk, 1.0) * (1.0 - mk) / 2.0 for mk in m])


# ---------------------------------------------------------------------------
# exact Z and posterior mean (Genz CDFs), for spot checks


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
    T = _check_T(T)
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


def exact_fisher_average(T: int, m: float, n_samples: int, rng: np.random.Generator, *,
                         relative_accuracy: float = 1e-3) -> tuple[float, float, np.ndarray]:
    """E_{u, y}|∇_u log Z|² with the exact gradient per sample: (mean, standard error, per-sample values).

    The reference for :func:`estimate_fisher` (§3.2's expectation with
    (u, y) sampled, Z and its gradient by :func:`exact_posterior_mean`).
    Cost ~0.15 s per sample at T = 3.
    """
    pairs = sample_se_pairs(T, m, n_samples, rng)
    _, g = exact_posterior_mean(T, pairs.u, pairs.winners, relative_accuracy=relative_accuracy,
                                seed=int(rng.integers(2**32)))
    values = np.sum(g * g, axis=-1)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size)), values


# ---------------------------------------------------------------------------
# per-sample posterior mean for GAMP-RIE


@dataclass(frozen=True)
class PosteriorMoments:
    """Per-sample estimates of E[ζ | y, u] (projected on τ⊥) and of tr Cov(ζ | y, u).

    ``proposals``: proposals drawn in total; ``redrawn``: samples whose first
    block had too few proposals inside the label's off-diagonal constraints.
    """

    mean: np.ndarray
    trace_cov: np.ndarray
    proposals: int
    redrawn: int


def posterior_mean_rejection(T: int, u: np.ndarray, winners: np.ndarray, rng: np.random.Generator, *,
                             draws: int = 32) -> np.ndarray:
    """E[ζ | y, u] per sample from ``draws`` rejection-sampled posterior draws, minus the first block's mean.

    The alternative to :func:`posterior_moments` measured in the report:
    unbiased, but its noise is ~3.4/draws (m = 0.75) to ~7/draws (m = 0.95)
    of |E[ζ|y,u]|² at T = 3, and every draw costs ~L candidates.
    """
    d = posterior_draws(T, u, winners, rng, first_block=draws, min_draws=draws)
    return d.draw_sum / d.count[:, None] - d.first_sum / d.first_block


def _truncated_moments(lower, bound):
    """Mean and second moment of ζ ~ N(0, 1) given ζ > bound (lower) or ζ < bound, and log P, stable in the tails."""
    log_p = np.where(lower, log_ndtr(-bound), log_ndtr(bound))
    with np.errstate(invalid="ignore"):
        ratio = np.exp(-0.5 * bound * bound - _LOG_SQRT_2PI - log_p)
    mean = np.where(lower, ratio, -ratio)
    return mean, 1.0 + bound * mean, log_p


def posterior_moments(T: int, u: np.ndarray, winners: np.ndarray, rng: np.random.Generator, *,
                      proposals: int = 256, min_inside: int | None = None,
                      max_proposals: int = MAX_CANDIDATES) -> PosteriorMoments:
    """E[ζ | y, u] and tr Cov(ζ | y, u) per sample by Rao–Blackwellised importance sampling (GAMP-RIE g_out).

    Given the P = T(T − 1)/2 off-diagonal entries, the diagonal entries are
    independent and each meets one inequality (row a: h_aa above the row's
    largest off-diagonal entry if w_a = a, below h_{a w_a} otherwise), so their
    part of the likelihood, Π_a Φ(·), and their truncated-normal moments are
    analytic.  The off-diagonal noise is drawn from N(0, I_P) (``proposals``
    per sample), kept if it satisfies the rows with an off-diagonal winner
    (h_{a w_a} largest among row a's off-diagonal entries), and weighted by
    Π_a Φ(·): a self-normalised estimate, bias O(1/proposals).  The
    off-diagonal mean has the first block's plain mean subtracted (mean zero;
    it cancels the noise for samples deep inside their label cell).  Samples
    with fewer than ``min_inside`` (default proposals/8) kept proposals are
    redrawn from N(μ, I), μ the nearest point meeting their off-diagonal
    constraints with margin :data:`SHIFT_MARGIN` (:func:`_feasible_shift`),
    reweighted by φ(ζ)/φ(ζ − μ), in blocks of doubling size up to
    ``max_proposals`` (AMP meets such labels when its estimate contradicts a
    sample strongly).

    Cost O(n · proposals · T²) (plus the redrawn samples'); measured
    T = 3, n = 10⁴ SE pairs, 256 proposals: 1.7 s CPU, noise |ĝ − g|² =
    0.6 % (m = 0.75) to 1.0 % (m = 0.97) of |g|², falling like 1/proposals.
    """
    T = _check_T(T)
    rng = _check_rng(rng)
    proposals = _check_positive_int("proposals", proposals, 2)
    min_inside = max(1, proposals // 8) if min_inside is None else _check_positive_int("min_inside", min_inside)
    u = np.asarray(u, dtype=float)
    M = n_components(T)
    if u.ndim != 2 or u.shape[1] != M:
        raise ValueError(f"u must have shape (n, {M}) for T={T}, got {u.shape}")
    winners = np.asarray(winners)
    if winners.shape != (u.shape[0], T):
        raise ValueError(f"winners must have shape ({u.shape[0]}, {T}), got {winners.shape}")
    n = u.shape[0]
    rows, cols, _ = _upper_indices(T)
    off = np.flatnonzero(rows != cols)
    first = rng.standard_normal((n, proposals, off.size))
    mean, second, inside = _weighted_moments(T, u, winners, first)
    mean[:, off] -= first.mean(axis=1)
    used = n * proposals
    todo = np.flatnonzero(inside < min_inside)
    redrawn = todo.size
    # Samples whose off-diagonal constraints are rare under N(0, I): propose around the nearest
    # point that meets them with a margin, N(μ, I), and reweight by φ(ζ)/φ(ζ − μ).
    shift = _feasible_shift(T, u[todo], winners[todo], SHIFT_MARGIN)
    block = proposals
    while todo.size:
        if block > max_proposals:
            raise RuntimeError(f"{todo.size} samples keep fewer than {min_inside} of {block} shifted proposals "
                               "inside their label's off-diagonal constraints")
        fresh = shift[:, None, :] + rng.standard_normal((todo.size, block, off.size))
        log_ratio = -np.einsum("nkp,np->nk", fresh, shift)
        log_ratio += 0.5 * np.sum(shift * shift, axis=1)[:, None]
        m_new, s_new, k_new = _weighted_moments(T, u[todo], winners[todo], fresh, log_ratio)
        used += todo.size * block
        done = k_new >= min_inside
        mean[todo[done]] = m_new[done] - _first_block_shift(off, first[todo[done]], M)
        second[todo[done]] = s_new[done]
        todo, shift = todo[~done], shift[~done]
        block *= 2
    tau_hat = tau_vector(T) / T
    mean -= np.outer(mean @ tau_hat, tau_hat)
    return PosteriorMoments(mean, np.sum(second, axis=-1), int(used), int(redrawn))


def _first_block_shift(off, first, M):
    shift = np.zeros((first.shape[0], M))
    shift[:, off] = first.mean(axis=1)
    return shift


def _feasible_shift(T, u, winners, margin, sweeps=200):
    """μ = argmin |μ|² subject to the off-diagonal constraints of each label with a margin (n, P).

    Row a with an off-diagonal winner w_a needs h_{a w_a} ≥ h_{ab} for the other
    off-diagonal entries b, i.e. ζ_e − ζ_f ≥ u_f − u_e (e, f the z indices of
    (a, w_a), (a, b)).  The projection is solved by coordinate ascent on the
    dual (λ ≥ 0, μ = Σ λ_k a_k), vectorised over samples; ``sweeps`` passes
    over at most T(T − 2) constraints.  Only a proposal mean: any μ is valid.
    """
    rows, cols, _ = _upper_indices(T)
    off = np.flatnonzero(rows != cols)
    position = {(int(rows[k]), int(cols[k])): j for j, k in enumerate(off)}
    n = u.shape[0]
    width = max(1, T * (T - 2))
    plus = np.zeros((n, width), dtype=int)
    minus = np.zeros((n, width), dtype=int)
    active = np.zeros((n, width), dtype=bool)
    for i in range(n):
        k = 0
        for a in range(T):
            w = int(winners[i, a])
            if w == a:
                continue
            for b in range(T):
                if b in (a, w):
                    continue
                plus[i, k] = position[tuple(sorted((a, w)))]
                minus[i, k] = position[tuple(sorted((a, b)))]
                active[i, k] = True
                k += 1
    u_off = u[:, off]
    rhs = np.take_along_axis(u_off, minus, 1) - np.take_along_axis(u_off, plus, 1) + margin
    lam = np.zeros((n, width))
    mu = np.zeros((n, off.size))
    rows_n = np.arange(n)
    for _ in range(sweeps):
        for k in range(width):
            slack = rhs[:, k] - (mu[rows_n, plus[:, k]] - mu[rows_n, minus[:, k]])
            step = np.where(active[:, k], np.maximum(-lam[:, k], slack / 2.0), 0.0)
            lam[:, k] += step
            mu[rows_n, plus[:, k]] += step
            mu[rows_n, minus[:, k]] -= step
    return mu


def _weighted_moments(T, u, winners, zeta_off, log_ratio=None):
    """Self-normalised E[ζ], per-component posterior variances and kept counts for off-diagonal proposals (n, K, P).

    ``log_ratio`` (n, K) adds the log density ratio of N(0, I) to the proposal law.
    Returns (mean (n, M), per-component Var(ζ_i | y, u) (n, M), kept (n,)).
    """
    rows, cols, _ = _upper_indices(T)
    diag = np.flatnonzero(rows == cols)
    off = np.flatnonzero(rows != cols)
    n, K, _ = zeta_off.shape
    o = (u[:, None, off] + zeta_off) / math.sqrt(2.0)
    H = np.full((n, K, T, T), -np.inf)
    H[..., rows[off], cols[off]] = o
    H[..., cols[off], rows[off]] = o
    log_w = np.zeros((n, K))
    d_mean = np.empty((n, K, T))
    d_second = np.empty((n, K, T))
    for a in range(T):
        row = H[..., a, :]
        top = row.max(axis=-1)
        w = winners[:, a]
        diagonal_wins = (w == a)[:, None]
        h_winner = np.take_along_axis(row, np.broadcast_to(w[:, None, None], (n, K, 1)), axis=-1)[..., 0]
        # w_a = a: ζ_aa > top − u_aa;  w_a ≠ a: ζ_aa < h_{a w_a} − u_aa and h_{a w_a} the largest off-diagonal entry
        bound = np.where(diagonal_wins, top, np.where(np.isfinite(h_winner), h_winner, 0.0)) - u[:, diag[a], None]
        mean_a, second_a, log_p = _truncated_moments(np.broadcast_to(diagonal_wins, bound.shape), bound)
        allowed = diagonal_wins | (h_winner >= top)
        log_w += np.where(allowed, log_p, -np.inf)
        d_mean[..., a] = mean_a
        d_second[..., a] = second_a
    if log_ratio is not None:
        log_w = log_w + log_ratio
    kept = np.isfinite(log_w)
    count = kept.sum(axis=1)
    shift = np.max(np.where(kept, log_w, -np.inf), axis=1, keepdims=True)
    weights = np.where(kept, np.exp(log_w - np.where(np.isfinite(shift), shift, 0.0)), 0.0)
    total = weights.sum(axis=1, keepdims=True)
    weights = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    d_mean = np.where(kept[..., None], d_mean, 0.0)
    d_second = np.where(kept[..., None], d_second, 0.0)
    # Var = E_w[Var(ζ | o)] + Var_w(E[ζ | o]); the weighted "between" part is divided by
    # 1 − Σw², which removes the O(1/K) downward bias of a self-normalised variance.
    correction = 1.0 - np.sum(weights * weights, axis=1, keepdims=True)
    correction = np.where(correction > 1e-12, correction, np.inf)
    mean = np.zeros((n, rows.size))
    second = np.zeros((n, rows.size))
    mean[:, off] = np.einsum("nk,nkp->np", weights, zeta_off)
    second[:, off] = (np.einsum("nk,nkp->np", weights, zeta_off * zeta_off) - mean[:, off] ** 2) / correction
    mean[:, diag] = np.einsum("nk,nkt->nt", weights, d_mean)
    within = np.einsum("nk,nkt->nt", weights, d_second - d_mean * d_mean)
    between = (np.einsum("nk,nkt->nt", weights, d_mean * d_mean) - mean[:, diag] ** 2) / correction
    second[:, diag] = within + between
    return mean, second, count


# ---------------------------------------------------------------------------
# the channel: SE through the fitted table, g_out by posterior sampling (GAMP-RIE)


@dataclass(frozen=True)
class HardmaxTokens(OutputChannel):
    """Hardmax output for any T ≥ 2: SE information from a :class:`FisherFit`, g_out by posterior sampling.

    * ``information(q, Q0) = 2 F_T(q/Q0)/(Q0 − q)``, so ``q̂ = α · information``
      as for every channel (module notes; §3.2).  ``fisher_scale``
      multiplies F (used by the delta method of :func:`solve_se`).
    * ``g_out(y, ω, V) = E[ζ | y, u]/√V`` with u = ω/√V, per sample by
      :func:`posterior_moments` with ``proposals`` off-diagonal proposals.
    * ``precision(y, ω, V) = −tr ∂g_out/∂ω = (M − tr Cov(ζ | y, u))/V``
      (∇²_u log Z = Cov − I, and the τ direction has posterior variance 1),
      from the same proposals as the last ``g_out`` call on the same arrays;
      its mean over samples is E|g_out|² (§5's Nishimori form) without the
      upward bias that the noise of ĝ would give |ĝ|².
    * ``log_z_out`` uses the exact Genz evaluation (slow; checks only).

    ``rng`` makes g_out reproducible: the same seed gives the same AMP run.
    """

    T: int = 3
    fisher: FisherFit | None = None
    proposals: int = 256
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0), compare=False, repr=False)
    fisher_scale: float = 1.0
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    name: ClassVar[str] = "hardmax_tokens"

    def __post_init__(self):
        super().__post_init__()
        _check_positive_int("proposals", self.proposals, 2)
        if self.fisher is not None and self.fisher.T != self.T:
            raise ValueError(f"the Fisher table is for T={self.fisher.T}, the channel for T={self.T}")
        if not (math.isfinite(self.fisher_scale) and self.fisher_scale > 0):
            raise ValueError(f"fisher_scale must be a finite number > 0, got {self.fisher_scale}")

    def sample_labels(self, h, rng=None):
        return apply_link(h, "hardmax")

    def information(self, q, Q0):
        _check_overlap(q, Q0)
        if self.fisher is None:
            raise ValueError("information needs a FisherFit (fit_fisher_table); this channel has none")
        return float(2.0 * self.fisher_scale * self.fisher.F(q / Q0) / (Q0 - q))

    def log_z_out(self, y, omega, V):
        V = _check_V(V)
        u = np.asarray(omega, dtype=float) / np.sqrt(V)[..., None]
        shape = u.shape[:-1]
        Z, _ = exact_posterior_mean(self.T, u.reshape(-1, self.m), winners_from_onehot(y).reshape(-1, self.T),
                                    gradient=False)
        return np.log(Z).reshape(shape)

    def _sample(self, y, omega, V):
        cached = self._cache.get("last")
        if cached is not None and cached[0] is y and cached[1] is omega and cached[2] == float(np.asarray(V)):
            return cached[3]
        V = _check_V(V)
        if V.ndim != 0:
            raise ValueError("this channel takes one scalar variance V")
        omega_arr = np.asarray(omega, dtype=float)
        u = omega_arr.reshape(-1, self.m) / math.sqrt(float(V))
        winners = winners_from_onehot(y).reshape(-1, self.T)
        moments = posterior_moments(self.T, u, winners, self.rng, proposals=self.proposals)
        g = moments.mean.reshape(omega_arr.shape) / math.sqrt(float(V))
        p = (self.m - moments.trace_cov).reshape(omega_arr.shape[:-1]) / float(V)
        self._cache["last"] = (y, omega, float(V), (g, p))
        return g, p

    def g_out(self, y, omega, V):
        return self._sample(y, omega, V)[0]

    def precision(self, y, omega, V):
        return self._sample(y, omega, V)[1]


# ---------------------------------------------------------------------------
# SE: one root per (ρ, α), its standard error and a uniqueness scan


@dataclass(frozen=True)
class HardmaxSEPoint:
    """SE fixed point through the fitted table: MMSE with its standard error from the table's noise.

    ``mmse_stderr`` by the delta method: |∂ MMSE/∂ log F| · σ_F(m*)/F(m*) at
    the fixed point m* (only F(m*) moves the root to first order).
    ``n_fixed_points`` is the number of roots of the fixed-point gap found by
    the scan of :func:`fixed_points` (1 = unique).
    """

    T: int
    alpha: float
    rho: float
    q: float
    q_hat: float
    mmse: float
    mmse_stderr: float
    F: float
    F_stderr: float
    m: float
    extrapolated: bool
    converged: bool
    iterations: int
    residual: float
    n_fixed_points: int

    def to_dict(self) -> dict:
        return asdict(self)


def _gap(channel, alpha, rho, v):
    Q0 = 1.0 + rho
    q_hat = alpha * channel.information(Q0 - v, Q0)
    return v - float(_mmse_any(np.array([1.0 / q_hat]), rho)[0])


def fixed_points(fit: FisherFit, alpha: float, rho: float, *, n_grid: int = 400, v_min: float = 1e-7) -> np.ndarray:
    """Every root v = MMSE of the fixed-point gap v − mmse(1/q̂(v)) on (v_min, 1], by a log-grid scan and brentq.

    The SE from the uninformative start converges to the largest root; more
    than one root would mean a first-order transition (§3.1: the
    Bayes-optimal one maximises the free entropy).  O(n_grid) evaluations.
    """
    channel = HardmaxTokens(T=fit.T, fisher=fit)
    v = np.geomspace(v_min, 1.0, n_grid)
    f = np.array([_gap(channel, alpha, rho, vk) for vk in v])
    roots = []
    for k in np.flatnonzero(np.sign(f[:-1]) * np.sign(f[1:]) < 0):
        roots.append(brentq(lambda x: _gap(channel, alpha, rho, x), v[k], v[k + 1], xtol=1e-14))
    if f[-1] == 0.0:
        roots.append(1.0)
    return np.array(sorted(roots, reverse=True))


def iterate_se(fit: FisherFit, alpha: float, rho: float, q_start: float, *, tol: float = 1e-10,
               max_iter: int = 10_000) -> tuple[float, int, bool]:
    """The SE iteration q ← Q0 − mmse(1/q̂(q)) of §3.2 from ``q_start``: (MMSE, iterations, converged).

    The plain (undamped) map, as the paper iterates it from q = ρ; started from
    several q it shows which fixed point each start reaches (the report uses
    0, ρ and 0.999 Q0).  Each step is one evaluation of F and of mmse.
    """
    channel = HardmaxTokens(T=fit.T, fisher=fit)
    Q0 = 1.0 + rho
    if not (0.0 <= q_start < Q0):
        raise ValueError(f"q_start must satisfy 0 <= q_start < Q0 = {Q0}, got {q_start}")
    q = float(q_start)
    for k in range(1, max_iter + 1):
        v = Q0 - q
        v_new = v - _gap(channel, alpha, rho, v)
        if abs(v_new - v) < tol:
            return v_new, k, True
        q = Q0 - v_new
    return Q0 - q, max_iter, False


def solve_se(fit: FisherFit, alpha: float, rho: float, *, tol: float = 1e-10, scan: bool = True,
             relative_step: float = 1e-3) -> HardmaxSEPoint:
    """SE fixed point at (α, ρ) with the fitted F_T: q̂ = 2α F_T(q/Q0)/(Q0 − q), q = Q0 − mmse(1/q̂) (§3.2).

    The root is found by ``state_evolution.solve_se`` (geometric scan from the
    uninformative v = 1, then brentq), the denoising error by ``spectra``.
    The MMSE's standard error comes from the fit's covariance by the delta
    method (the root is re-solved with F scaled by 1 ± ``relative_step``).
    With ``scan`` the fixed-point gap is scanned for other roots.
    """
    if not isinstance(fit, FisherFit):
        raise ValueError(f"fit must be a FisherFit, got {type(fit).__name__}")
    channel = HardmaxTokens(T=fit.T, fisher=fit)
    point = _solve_generic_se(channel, alpha, rho, tol=tol)
    Q0 = 1.0 + point.rho
    m = point.q / Q0
    F = float(fit.F(m))
    F_err = float(fit.F_stderr(m))
    up = _solve_generic_se(replace(channel, fisher_scale=1.0 + relative_step), alpha, rho, tol=tol).mmse
    down = _solve_generic_se(replace(channel, fisher_scale=1.0 - relative_step), alpha, rho, tol=tol).mmse
    slope = (up - down) / (2.0 * relative_step)
    n_roots = fixed_points(fit, alpha, rho).size if scan else -1
    return HardmaxSEPoint(fit.T, float(alpha), float(rho), point.q, point.q_hat, point.mmse,
                          float(abs(slope) * F_err / F), F, F_err, float(m),
                          bool(math.sqrt(max(1.0 - m, 0.0)) < fit.x_min), point.converged, point.iterations,
                          point.residual, int(n_roots))


def se_curve(fit: FisherFit, alphas, rho: float, *, scan: bool = False) -> list[HardmaxSEPoint]:
    """:func:`solve_se` along a grid of α (each point solved from the uninformative start)."""
    return [solve_se(fit, float(a), rho, scan=scan) for a in np.atleast_1d(alphas)]


def curve_columns(points) -> dict:
    """Columns of a table of SE points (:func:`se_curve`): the SE keys of ``state_evolution`` plus the errors.

    ``alpha, mmse, mmse_stderr, q, q_hat, F, F_stderr, m, extrapolated,
    converged, iterations, residual, n_fixed_points`` (−1: not scanned).
    """
    points = list(points)
    if not points:
        raise ValueError("points must hold at least one HardmaxSEPoint")
    names = ("alpha", "mmse", "mmse_stderr", "q", "q_hat", "F", "F_stderr", "m", "extrapolated", "converged",
             "iterations", "residual", "n_fixed_points")
    return {name: np.array([getattr(p, name) for p in points]) for name in names}
