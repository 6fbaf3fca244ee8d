"""The Fisher table F_T(m) on a grid of x = √(1 − m), and its weighted Chebyshev fit with errors.

Module notes of :mod:`aimrepro.paper1.hardmax_tokens` ("Table and interpolant").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import chebyshev

from aimrepro.paper1.channels import Hardmax2

from .arguments import check_count, check_tokens
from .fisher import estimate_fisher

__all__ = ["FIT_DEGREE", "TABLE_NODES", "TABLE_N_REFERENCE", "TABLE_X_MIN", "FisherFit", "FisherTable",
           "exact_fisher_t2", "fisher_table", "fit_fisher_table", "node_seeds", "table_grid", "table_samples"]

#: Default table: nodes, smallest x = √(1 − m), samples n_k = TABLE_N_REFERENCE/x_k, fit degree (report).
TABLE_NODES = 17
TABLE_X_MIN = 0.02
TABLE_N_REFERENCE = 200_000
FIT_DEGREE = 6



def table_grid(n_nodes: int = TABLE_NODES, x_min: float = TABLE_X_MIN) -> np.ndarray:
    """Nodes x_k = √(1 − m_k) on [x_min, 1], Chebyshev–Lobatto spaced (dense near m = 1 and m = 0).

    The default (17 nodes, x_min = 0.02, i.e. m up to 0.9996) covers the SE
    for α up to ~10 at T ≤ 4 without extrapolation; below x_min the fit
    extrapolates (see :class:`FisherFit`).
    """
    n_nodes = check_count("n_nodes", n_nodes, 2)
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
    n_reference = check_count("n_reference", n_reference, 2)
    x = np.asarray(x, dtype=float)
    return np.ceil(n_reference / x).astype(np.int64)


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
        return cls(check_tokens(T), x, np.asarray(columns["F"], dtype=float), np.asarray(columns["F_stderr"], dtype=float),
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
    T = check_tokens(T)
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
    degree = check_count("degree", degree, 0)
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
