"""What a Fisher table costs: the estimator's measured CPU per sample, for the cost model.

``aimrepro_workflow``'s cost model prices a table with :func:`estimated_table_seconds`.
"""

from __future__ import annotations

import math

import numpy as np

from .arguments import check_count, check_tokens
from .labels import possible_labels
from .tables import TABLE_NODES, TABLE_X_MIN, table_grid

__all__ = ["MAX_TABLE_NODES", "SAMPLE_MICROSECONDS", "estimated_table_seconds"]

#: Most nodes a table may have: the estimate sums over them (a grid of this many floats).
MAX_TABLE_NODES = 100_000


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
    T = check_tokens(T)
    if check_count("n_nodes", n_nodes, 2) > MAX_TABLE_NODES:
        raise ValueError(f"n_nodes must be an integer in [2, {MAX_TABLE_NODES}], got {n_nodes}")
    n_reference = check_count("n_reference", n_reference, 2)
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
