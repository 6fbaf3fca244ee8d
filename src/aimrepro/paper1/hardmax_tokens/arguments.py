"""Argument checks shared by the hardmax T ≥ 2 modules: one line naming the bad argument."""

from __future__ import annotations

import numpy as np

from aimrepro.paper1.channels import n_components

__all__ = ["check_count", "check_ratio", "check_rng", "check_samples", "check_tokens"]


def check_tokens(T):
    """T as an int; ValueError unless it is an integer >= 2."""
    if not (isinstance(T, (int, np.integer)) and T >= 2):
        raise ValueError(f"T must be an integer >= 2, got {T!r}")
    return int(T)


def check_ratio(m):
    """m = q/Q0 as a float; ValueError unless 0 <= m < 1."""
    m = float(m)
    if not (0.0 <= m < 1.0):
        raise ValueError(f"m = q/Q0 must satisfy 0 <= m < 1, got {m}")
    return m


def check_count(name, value, minimum=1):
    """``value`` as an int; ValueError naming ``name`` unless it is an integer >= ``minimum``."""
    if not (isinstance(value, (int, np.integer)) and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_rng(rng):
    """``rng``; ValueError unless it is a numpy Generator."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def check_samples(T: int, u, winners) -> tuple[np.ndarray, np.ndarray]:
    """(u, winners) as arrays; ValueError unless u is (n, M) and winners (n, T) (M = T(T + 1)/2)."""
    u = np.asarray(u, dtype=float)
    M = n_components(T)
    if u.ndim != 2 or u.shape[1] != M:
        raise ValueError(f"u must have shape (n, {M}) for T={T}, got {u.shape}")
    winners = np.asarray(winners)
    if winners.shape != (u.shape[0], T):
        raise ValueError(f"winners must have shape ({u.shape[0]}, {T}), got {winners.shape}")
    return u, winners
