"""The hardmax label map: row winners of the T×T index, one-hot labels, codes, possible labels, constraints.

A *label* is the tuple of row winners w_a = argmax_b h_ab of the symmetric
index h (``docs/paper1.md`` §1.3), in z-scale (:mod:`aimrepro.paper1.channels`).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from aimrepro.paper1.channels import from_z_scale, upper_indices

from .arguments import check_tokens

__all__ = ["label_codes", "label_constraints", "onehot_from_winners", "possible_labels", "winners_from_onehot",
           "winners_from_z"]



def winners_from_z(z: np.ndarray, T: int) -> np.ndarray:
    """Row winners w_a = argmax_b h_ab of h = from_z_scale(z): (..., M) → (..., T) int (§1.3).

    Ties have probability zero under every continuous law used here; argmax
    breaks them towards the lower index.  O(T²) per sample.
    """
    T = check_tokens(T)
    return np.argmax(from_z_scale(z, T), axis=-1)


def winners_from_onehot(y: np.ndarray) -> np.ndarray:
    """Row winners of one-hot labels y (..., T, T), as produced by ``model.apply_link(h, "hardmax")``."""
    y = np.asarray(y, dtype=float)
    if y.ndim < 2 or y.shape[-1] != y.shape[-2]:
        raise ValueError(f"y must have shape (..., T, T), got {y.shape}")
    return np.argmax(y, axis=-1)


def onehot_from_winners(winners: np.ndarray, T: int) -> np.ndarray:
    """One-hot labels (..., T, T) of row winners (..., T)."""
    T = check_tokens(T)
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
    T = check_tokens(T)
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
    T = check_tokens(T)
    rows, cols, tau = upper_indices(T)
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
