"""GAMP-RIE and averaged GD on datasets of one token law, several replicates in one call (``docs/paper1.md`` §13).

A finite-size trend of a token law needs, at each d, the same replicates for
the law and for Gaussian tokens: the datasets of a replicate share the
teacher and the standard normals behind the tokens
(:class:`aimrepro.model.TokenLaw`, :func:`aimrepro.paper1.data.dataset_seed`),
so the paired difference law − Gaussian has a much smaller spread than
either error (common random numbers).  These functions sample each
replicate's dataset in memory and return one small table per (point, law, d):
the datasets are cheap to redraw (bit for bit) and are not kept.

Cost: per replicate, sampling O(n T d r) plus one GAMP-RIE run
(O(iterations · (n T d² + d³))) or one GD run of K students
(O(steps · K n T d r)).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from aimrepro.model import TokenLaw
from aimrepro.paper1 import amp, gd
from aimrepro.paper1.data import DatasetSpec, sample_dataset

__all__ = ["AMP_COLUMNS", "GD_COLUMNS", "amp_replicates", "gd_replicates", "paired_differences"]

#: Columns of :func:`amp_replicates` (``status`` is a string column).
AMP_COLUMNS = ("replicate", "error", "C_hat", "iterations", "converged", "status")
#: Columns of :func:`gd_replicates`.
GD_COLUMNS = ("replicate", "averaged_error", "single_error", "n_diverged")


def _check_replicates(replicates: Sequence[int]) -> list[int]:
    replicates = [int(r) for r in replicates]
    if not replicates or len(set(replicates)) != len(replicates) or min(replicates) < 0:
        raise ValueError(f"replicates must be distinct integers >= 0, at least one, got {replicates}")
    return replicates


def amp_replicates(channel: str, *, T: int, rho: float, alpha: float, d: int, law: TokenLaw,
                   replicates: Sequence[int], base_seed: int, beta: float | None = None, n_test: int = 1,
                   damping: float = 0.5, **stopping_fields) -> dict[str, np.ndarray]:
    """GAMP-RIE with ``channel`` on the dataset of each replicate (tokens of ``law``): one row per replicate.

    Parameters
    ----------
    channel : ``softmax``, ``hardmax`` or ``hardmax_paper`` (``amp.CHANNEL_LINK`` gives the data's link)
    T, rho, alpha, d, beta : the dataset's point (``data.DatasetSpec``; β for softmax only)
    law : the token law; replicates : the replicate indices (the ``seed`` of result paths)
    base_seed : the config's seed; n_test : test sequences drawn per dataset (not used here)
    damping, stopping_fields : as :func:`aimrepro.paper1.amp.run_on_dataset`

    Returns
    -------
    dict of arrays, columns :data:`AMP_COLUMNS`: the final error ‖Ŝ − S‖²_F/d, AMP's own
    predicted error Ĉ, iterations, converged and status (``amp.STATUSES``).
    """
    replicates = _check_replicates(replicates)
    rows = []
    for replicate in replicates:
        spec = DatasetSpec(link=amp.CHANNEL_LINK[channel], T=T, rho=rho, d=d, alpha=alpha, replicate=replicate,
                           n_test=n_test, beta=beta, tokens=law)
        result = amp.run_on_dataset(sample_dataset(spec, base_seed), channel, damping=damping,
                                    **stopping_fields).result
        rows.append((replicate, result.error, result.C_hat, result.iterations, result.converged, result.status))
    return {name: np.array([row[i] for row in rows]) for i, name in enumerate(AMP_COLUMNS)}


def gd_replicates(*, T: int, rho: float, alpha: float, d: int, law: TokenLaw, replicates: Sequence[int],
                  base_seed: int, n_inits: int, settings: gd.GDSettings, beta: float = 1.0,
                  n_test: int = 1, threads: int = 1) -> dict[str, np.ndarray]:
    """K students of full-batch Adam on the softmax dataset of each replicate (tokens of ``law``).

    The students' initialisations depend on (base seed, dataset point, k) and
    not on the law (``gd.student_seeds``): common random numbers again.
    Columns :data:`GD_COLUMNS`: the error of the mean of the finished
    students, the mean error of one student, and the diverged count.
    """
    replicates = _check_replicates(replicates)
    rows = []
    for replicate in replicates:
        spec = DatasetSpec(link="softmax", T=T, rho=rho, d=d, alpha=alpha, replicate=replicate, n_test=n_test,
                           beta=beta, tokens=law)
        summary = gd.run_on_dataset(sample_dataset(spec, base_seed), n_inits, settings, threads=threads).summary()
        rows.append((replicate, summary["averaged_error"], summary["single_error"], summary["n_diverged"]))
    return {name: np.array([row[i] for row in rows]) for i, name in enumerate(GD_COLUMNS)}


def paired_differences(law_table, gaussian_table, column: str, *, usable=None) -> np.ndarray:
    """Per replicate present in both tables (and usable in both), law minus Gaussian in ``column``.

    ``usable`` : a function of a table returning a boolean mask of the rows
    that count (e.g. AMP's converged or stationary runs); default all rows.
    """
    usable = (lambda table: np.ones(len(table["replicate"]), dtype=bool)) if usable is None else usable
    law_rows = {int(r): i for i, r in enumerate(law_table["replicate"]) if usable(law_table)[i]}
    gauss_rows = {int(r): i for i, r in enumerate(gaussian_table["replicate"]) if usable(gaussian_table)[i]}
    common = sorted(set(law_rows) & set(gauss_rows))
    return np.array([float(law_table[column][law_rows[r]]) - float(gaussian_table[column][gauss_rows[r]])
                     for r in common])
