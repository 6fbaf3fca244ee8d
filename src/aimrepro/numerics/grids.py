"""The linear and logarithmic grids of the config.

Every grid of the config is a mapping ``{spacing, lo, hi}`` plus a number of
points; :func:`grid_values` turns it into the points.  Result paths spell
the grid (``alpha_log_0.03_10_n64``), so a person can read it off a file name.
"""

from __future__ import annotations

import math

import numpy as np

SPACINGS = ("lin", "log")


def grid_values(spacing: str, lo: float, hi: float, n: int) -> np.ndarray:
    """n points from lo to hi inclusive, linearly or logarithmically spaced."""
    if spacing not in SPACINGS:
        raise ValueError(f"spacing must be one of {SPACINGS}, got {spacing!r}")
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        raise ValueError(f"grid bounds must be finite with lo <= hi, got lo={lo}, hi={hi}")
    if spacing == "log":
        if lo <= 0:
            raise ValueError(f"a log grid needs lo > 0, got lo={lo}")
        return np.geomspace(lo, hi, n)
    return np.linspace(lo, hi, n)
