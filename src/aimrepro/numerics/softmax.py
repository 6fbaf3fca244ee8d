"""The row log-softmax in numpy alone.

The label maps of both papers (``aimrepro.model.apply_link``,
``aimrepro.paper2.losses.Link.apply``) need only this one function of
scipy.special, and importing scipy.special costs about 0.1 s per process.
Every data-sampling and SGD job is a process of its own (several hundred at
the quick scale), so the label maps use this copy of the same arithmetic and
scipy.special stays out of those jobs.  The operations and their order are
scipy's (``scipy.special.log_softmax``, 1.17): shift by the finite maximum,
exponentiate, sum, take the log, so the results are the same bits
(tests/unit/test_softmax.py checks it against scipy).
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_softmax"]


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log(softmax(x)) along ``axis``, stable for large |x|; -inf entries give -inf.

    An all -inf (or +inf) slice is shifted by 0, as in scipy, so the result
    is NaN there rather than an exception.
    """
    x = np.asarray(x, dtype=float)
    x_max = np.max(x, axis=axis, keepdims=True)
    x_max[~np.isfinite(x_max)] = 0.0
    shifted = x - x_max
    with np.errstate(divide="ignore"):
        log_norm = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return shifted - log_norm
