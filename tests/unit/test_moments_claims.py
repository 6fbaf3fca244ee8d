"""The moment-hierarchy rows on synthetic truncations whose radius of convergence is known.

Truncation M has the overlap of its reference plus (t/R)^M, the remainder of
a power series of radius R: larger M helps for t < R and hurts beyond, and
the error's decay rate in M is κ(t) = ln(R/t).
"""

from __future__ import annotations

import numpy as np
import pytest

from aimrepro.claims import paper2_moments as pm
from aimrepro.claims.table import OVERSTATED
from aimrepro.paper2.moment_experiments import EXACT_ERROR_FLOOR
from aimrepro.paper2.trajectory import ORDER_NAMES, Trajectory

R = 0.07
ORDERS = [2, 4, 6, 8, 10]
TIMES = np.linspace(0.0, 0.1, 41)


def _run(overlap: np.ndarray, **extra) -> Trajectory:
    order = np.zeros((TIMES.size, len(ORDER_NAMES)))
    order[:, ORDER_NAMES.index("Psi12")] = overlap
    order[:, ORDER_NAMES.index("Psi22")] = 1.0
    return Trajectory(TIMES, order, 50, extra={k: np.full(TIMES.size, v) for k, v in extra.items()})


def _replicates(n: int = 2):
    references, truncations = [], []
    for s in range(n):
        base = 0.5 * TIMES * (1 + 0.1 * s)
        references.append(_run(base))
        truncations.append({m: _run(base + (TIMES / R) ** m, t_left_psd=np.nan) for m in ORDERS})
    return references, truncations


def _radius_table(radius: float) -> dict:
    return {"radius": np.array([radius]), "no_teacher_radius": np.array([0.9 * radius]),
            "singularity_im": np.array([0.0]), "converged": np.array([True])}


def test_radius_row_passes_on_the_true_radius_and_fails_on_another():
    references, truncations = _replicates()
    kwargs = dict(figure="fig4", label="Fig. 4", references=references, truncations=truncations,
                  orders=ORDERS, floor=EXACT_ERROR_FLOOR)
    (row,) = pm.radius_rows(radius=_radius_table(R), **kwargs)
    assert row.verdict == "pass", row.note
    assert "κ(t) = 0" in row.note
    (wrong,) = pm.radius_rows(radius=_radius_table(1.3 * R), **kwargs)
    assert wrong.verdict == "FAIL"


def test_more_orders_row_is_overstated_with_the_apparent_radius_in_its_note():
    references, truncations = _replicates()
    rows = pm.truncation_figure_rows(figure="fig1", label="Fig. 1", runs=references,
                                     references=references, truncations=truncations,
                                     orders=ORDERS, short_time=0.02, floor=EXACT_ERROR_FLOOR,
                                     reference_name="matrix flow")
    short, more = rows
    assert short.verdict == "pass"
    assert more.verdict == OVERSTATED
    # the note names the zero of κ(t), which for this power series is R
    apparent = float(more.note.split("apparent radius of convergence) at t = ")[1].split(" ")[0])
    assert apparent == pytest.approx(R, rel=0.03)
