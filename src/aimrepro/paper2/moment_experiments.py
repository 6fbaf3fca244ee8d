"""Result tables of the moment hierarchy: truncations, the Riccati reference, truncation errors.

Paper 2, Figures 1 and 4 and the supplementary Figure S6 (``docs/paper2.md`` §4,
§6).  Every table starts from the initial state of an SGD replicate (the
student factor W and the teacher S* of
:func:`aimrepro.paper2.sgd.initial_problem`), so theory and simulation
share their initial moments ([P Ass. 2.3]).  Each function returns the
columns of one table (for :func:`aimrepro.records.tables.write_table`) and a
diagnostics dict for the sidecar; the ``read_*`` functions invert them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from aimrepro.paper2.matrices import FactoredMatrix
from aimrepro.paper2.moments import (TruncationRun, WordBasis, initial_moments, project_psd,
                                     riccati_moments, solve_truncation)
from aimrepro.paper2.population import IndexLaw, Potential
from aimrepro.paper2.sgd import ProblemSpec, initial_problem
from aimrepro.paper2.trajectory import Trajectory

__all__ = [
    "ERROR_MOMENTS",
    "EXACT_ERROR_FLOOR",
    "FLOW_ERROR_FLOOR",
    "convergence_horizon",
    "decay_horizon",
    "error_matrix",
    "exponential_rate",
    "initial_state",
    "population_loss",
    "read_truncations",
    "riccati_table",
    "signed_overlap",
    "stack_truncations",
    "truncation_error_table",
    "truncation_overlap_errors",
    "truncation_runs",
    "truncation_table",
]

#: Errors at or below these count as converged: round-off against the closed-form
#: Riccati solution, and the accuracy (rtol 1e-6) of the numerical matrix flow.
EXACT_ERROR_FLOOR = 1e-12
FLOW_ERROR_FLOOR = 1e-5

#: Moments whose truncation error the S6 table holds: (column stem, word).
ERROR_MOMENTS = (("mu1", (0,)), ("q11", (0, 0)), ("q12", (0, 1)))


def _check_tied(spec: ProblemSpec) -> None:
    if spec.param != "tied":
        raise ValueError(f"the moment hierarchy is that of tied attention, got param = {spec.param!r}")


def _check_riccati(spec: ProblemSpec) -> None:
    _check_tied(spec)
    if spec.link not in ("linear", "h1") or spec.T != 1 or spec.teacher_link not in (None, spec.link):
        raise ValueError("the Riccati closed form is the linear case: link 'linear' (or 'h1') for "
                         f"student and teacher and T = 1, got link {spec.link!r}, T = {spec.T}")


def initial_state(spec: ProblemSpec, seed: int, *, matrix_scale: float = 1.0) -> tuple[
        np.ndarray, FactoredMatrix]:
    """W(0) and S* of replicate ``seed`` of a tied problem, both S's multiplied by ``matrix_scale``.

    ``matrix_scale`` = s replaces S₁ = W Wᵀ by s S₁ (W by √s W) and S* by s S*.
    Without weight decay this only rescales time (the flow is quadratic in
    S); with weight decay it sets the strength of γ relative to ‖S‖
    (``docs/paper2.md`` §4.2, the S6 setting).
    """
    _check_tied(spec)
    if not (math.isfinite(matrix_scale) and matrix_scale > 0):
        raise ValueError(f"matrix_scale must be a finite number > 0, got {matrix_scale}")
    student, teacher, _ = initial_problem(spec, seed)
    return math.sqrt(matrix_scale) * student.W, teacher.scaled(matrix_scale)


def population_loss(trajectory: Trajectory, potential: Potential) -> np.ndarray:
    """Φ at the (PSD-projected) q of every record of a tied trajectory: the d → ∞ population loss."""
    return np.array([potential.evaluate(IndexLaw.symmetric(project_psd(trajectory.at(i).q),
                                                           potential.T), gradient=False).value
                     for i in range(len(trajectory))])


def signed_overlap(trajectory: Trajectory) -> np.ndarray:
    """p₁₂/p₂₂ with its sign (a diverging truncation may drive it negative)."""
    return trajectory.p12 / (trajectory.column("Psi22") - trajectory.column("t2") ** 2)


def _check_orders(orders: Sequence[int]) -> list[int]:
    orders = sorted({int(m) for m in orders})
    if not orders or orders[0] < 2:
        raise ValueError(f"truncation orders must be integers >= 2, got {orders}")
    return orders


def truncation_runs(spec: ProblemSpec, seed: int, times, orders: Sequence[int], *,
                    weight_decay: float = 0.0, matrix_scale: float = 1.0,
                    potential: Potential | None = None, blowup_factor: float = 1e3,
                    rtol: float = 1e-10, atol: float = 1e-13) -> dict[int, TruncationRun]:
    """The truncated hierarchy at each order M from the initial moments of replicate ``seed``.

    The moments are computed once at the largest order and restricted to the
    smaller ones; Γ is that of ``spec``'s loss (``potential``, default
    ``Potential(spec.loss(), spec.T)``).
    """
    orders = _check_orders(orders)
    W, teacher = initial_state(spec, seed, matrix_scale=matrix_scale)
    potential = Potential(spec.loss(), spec.T) if potential is None else potential
    largest = WordBasis(orders[-1])
    mu_largest = initial_moments(largest, [W @ W.T, teacher])
    gamma = potential.gamma
    if spec.link in ("linear", "h1") and spec.teacher_link in (None, spec.link):
        # Φ is linear in q for the linear link ([P eq. 339]): Γ is one constant matrix
        constant = potential.gamma(largest.order_parameters(mu_largest).q)

        def gamma(q):
            return constant
    runs = {}
    for order in orders:
        basis = largest if order == orders[-1] else WordBasis(order)
        runs[order] = solve_truncation(basis, largest.restrict(mu_largest, basis), gamma,
                                       times, weight_decay=weight_decay,
                                       blowup_factor=blowup_factor, rtol=rtol, atol=atol)
    return runs


def truncation_table(spec: ProblemSpec, seed: int, times, orders: Sequence[int], *,
                     weight_decay: float = 0.0) -> tuple[dict[str, np.ndarray], dict]:
    """Order parameters of every truncation order, as one long table (Figures 1 and 4).

    Columns: ``order``, then those of :meth:`Trajectory.columns` (a blow-up
    is a last row with ``blew_up`` true at its time), with extra columns
    ``loss`` (Φ at the PSD projection of q), ``q_min_eig``, ``t_left_psd``
    (first time q left the PSD cone, NaN if never), ``status``, ``nfev``.
    """
    start = time.process_time()
    potential = Potential(spec.loss(), spec.T)
    runs = truncation_runs(spec, seed, times, orders, weight_decay=weight_decay,
                           potential=potential)

    def loss(q):
        return potential.evaluate(IndexLaw.symmetric(q, spec.T), gradient=False).value

    parts = []
    per_order = {}
    for order, run in runs.items():
        trajectory = run.trajectory(spec.d, loss=loss)
        extra = dict(trajectory.extra)
        extra["t_left_psd"] = np.full(len(trajectory), run.t_left_psd)
        trajectory = Trajectory(trajectory.t_ode, trajectory.order, trajectory.d,
                                trajectory.blew_up, trajectory.t_blowup, extra)
        columns = trajectory.columns()
        n = len(columns["t_ode"])
        parts.append({"order": np.full(n, order, dtype=np.int64), **columns})
        per_order[str(order)] = {"blew_up": run.blew_up,
                                 "t_blowup": None if not run.blew_up else run.t_blowup,
                                 "t_left_psd": None if math.isnan(run.t_left_psd)
                                 else run.t_left_psd,
                                 "status": run.status, "nfev": run.nfev,
                                 "n_words": len(run.basis), "message": run.message}
    columns = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    # A blow-up is a result (recorded per order); only a failed solve is unconverged.
    diagnostics = {"converged": all(r.status != -1 for r in runs.values()),
                   "orders": per_order, "potential": potential.settings(),
                   "cpu_seconds": time.process_time() - start}
    return columns, diagnostics


def read_truncations(columns: Mapping[str, np.ndarray], d: int) -> dict[int, Trajectory]:
    """Inverse of :func:`truncation_table`: one :class:`Trajectory` per order.

    The first time q left the PSD cone is ``trajectory.extra["t_left_psd"]``
    (constant; NaN if never).
    """
    order = np.asarray(columns["order"], dtype=np.int64)
    out = {}
    for m in np.unique(order):
        keep = order == m
        sub = {name: np.asarray(col)[keep] for name, col in columns.items() if name != "order"}
        out[int(m)] = Trajectory.from_columns(sub, d)
    return out


def riccati_table(spec: ProblemSpec, seed: int, times, *, weight_decay: float = 0.0,
                  matrix_scale: float = 1.0) -> tuple[dict[str, np.ndarray], dict]:
    """The exact matrix flow of the linear case (Riccati closed form) on ``times`` (Figure 4).

    Order parameters of S₁(t) against S* (:func:`~aimrepro.paper2.moments.riccati_solution`)
    with a ``loss`` column Φ = c(2q₁₁ + 2q₂₂ − 4q₁₂) ([P eq. 339]).
    """
    _check_riccati(spec)
    start = time.process_time()
    W, teacher = initial_state(spec, seed, matrix_scale=matrix_scale)
    basis = WordBasis(2)
    mu = riccati_moments(basis, W, teacher, times, prefactor=spec.loss_prefactor,
                         weight_decay=weight_decay)
    ops = [basis.order_parameters(m) for m in mu]
    c = spec.loss_prefactor
    loss = np.array([c * (2 * op.q[0, 0] + 2 * op.q[1, 1] - 4 * op.q[0, 1]) for op in ops])
    trajectory = Trajectory(np.asarray(times, float), np.array([op.as_vector() for op in ops]),
                            spec.d, extra={"loss": loss})
    return trajectory.columns(), {"converged": True, "cpu_seconds": time.process_time() - start,
                                  "method": "closed form (docs/paper2.md §4.4, [P eq. 343])"}


def truncation_error_table(spec: ProblemSpec, seed: int, times, max_order: int, *,
                           weight_decay: float = 0.0, matrix_scale: float = 1.0) -> tuple[
        dict[str, np.ndarray], dict]:
    """Truncation error of every order 2 … ``max_order`` against the exact Riccati flow (Figure S6).

    The linear case at one weight decay: the truncations and the closed-form
    solution start from the same finite-d moments, so the difference is the
    truncation error alone.

    Columns (one row per order and time): ``order``, ``t_ode``, for each
    moment of :data:`ERROR_MOMENTS` the exact value ``{name}_exact`` and the
    absolute error ``err_{name}`` (NaN once the truncation blew up),
    ``blew_up`` (the truncation blew up at or before this time) and
    ``left_psd`` (its q had left the PSD cone by this time).
    """
    _check_riccati(spec)
    start = time.process_time()
    times = np.asarray(times, dtype=float)
    if not (isinstance(max_order, (int, np.integer)) and max_order >= 2):
        raise ValueError(f"max_order must be an integer >= 2, got {max_order!r}")
    orders = list(range(2, int(max_order) + 1))
    W, teacher = initial_state(spec, seed, matrix_scale=matrix_scale)
    small = WordBasis(2)
    exact = riccati_moments(small, W, teacher, times, prefactor=spec.loss_prefactor,
                            weight_decay=weight_decay)
    # Tight tolerances: errors down to ~1e-15 are the measurement here.
    runs = truncation_runs(spec, seed, times, orders, weight_decay=weight_decay,
                           matrix_scale=matrix_scale, rtol=1e-12, atol=1e-15)
    rows: dict[str, list] = {"order": [], "t_ode": [], "blew_up": [], "left_psd": []}
    for name, _ in ERROR_MOMENTS:
        rows[f"{name}_exact"] = []
        rows[f"err_{name}"] = []
    for order, run in runs.items():
        reached = np.searchsorted(times, run.t_ode)       # the run's records are a prefix
        values = np.full((times.size, len(ERROR_MOMENTS)), np.nan)
        for j, (_, word) in enumerate(ERROR_MOMENTS):
            values[reached, j] = run.column(word)
        for i, t in enumerate(times):
            rows["order"].append(order)
            rows["t_ode"].append(t)
            rows["blew_up"].append(bool(run.blew_up and t >= run.t_blowup))
            rows["left_psd"].append(bool(t >= run.t_left_psd))
            for j, (name, word) in enumerate(ERROR_MOMENTS):
                value = exact[i, small.index(word)]
                rows[f"{name}_exact"].append(value)
                rows[f"err_{name}"].append(abs(values[i, j] - value))
    columns = {name: np.asarray(values) for name, values in rows.items()}
    columns["order"] = columns["order"].astype(np.int64)
    diagnostics = {
        "converged": all(run.status != -1 for run in runs.values()),
        "blowups": {str(m): (run.t_blowup if run.blew_up else None) for m, run in runs.items()},
        "t_left_psd": {str(m): (None if math.isnan(run.t_left_psd) else run.t_left_psd)
                       for m, run in runs.items()},
        "nfev": {str(m): run.nfev for m, run in runs.items()},
        "cpu_seconds": time.process_time() - start,
    }
    return columns, diagnostics


# --- analysis of the tables (claims and figures) ---------------------------------------------


def convergence_horizon(times: np.ndarray, errors: np.ndarray, orders: Sequence[int], *,
                        floor: float) -> float | None:
    """First time at which the largest order stops being the most accurate; None if never.

    Parameters
    ----------
    times : (n,) array
    errors : (n_orders, n) array
        Absolute errors, rows in the order of ``orders``; NaN (a blown-up
        truncation) counts as an infinite error.
    orders : sequence of int, increasing
    floor : float
        Errors at or below ``floor`` are converged: at a time where the
        largest order is within the floor, larger M has not stopped helping.

    Notes
    -----
    "Larger M helps at t" means err(M_max, t) < min_{M < M_max} err(M, t)
    or err(M_max, t) ≤ floor.  Comparing the largest order with the best of
    all smaller ones (not only its neighbour) is robust to the parity
    effects of the hierarchy (odd orders leave the PSD cone first).
    """
    if list(orders) != sorted(orders) or len(orders) < 2:
        raise ValueError(f"need at least two increasing orders, got {orders}")
    err = np.where(np.isfinite(errors), errors, np.inf)
    for i, t in enumerate(times):
        top, rest = err[-1, i], err[:-1, i].min()
        if not (top <= floor or top < rest):
            return float(t)
    return None


def exponential_rate(orders: Sequence[int], errors: Sequence[float], *,
                     floor: float) -> tuple[float, float, int]:
    """κ and R² of the least-squares fit ln err = a − κ M over the errors above ``floor``.

    Returns (NaN, NaN, n) with fewer than 3 usable points; R² is NaN when the
    errors are equal across M.
    """
    M = np.asarray(orders, dtype=float)
    e = np.asarray(errors, dtype=float)
    keep = np.isfinite(e) & (e > floor)
    n = int(keep.sum())
    if n < 3:
        return math.nan, math.nan, n
    y = np.log(e[keep])
    slope, intercept = np.polyfit(M[keep], y, 1)
    residual = y - (intercept + slope * M[keep])
    spread = float(np.sum((y - y.mean()) ** 2))
    # errors equal across M (κ = 0 exactly, e.g. at the radius itself): R² is undefined
    r2 = 1.0 - float(residual @ residual) / spread if spread > 0 else math.nan
    return float(-slope), r2, n


def decay_horizon(times: np.ndarray, errors: np.ndarray, orders: Sequence[int], *,
                  floor: float) -> float | None:
    """Where the error stops decaying in M on average: the first zero of κ(t); None if never.

    κ(t) is the slope of :func:`exponential_rate` at each time (NaN where
    fewer than three orders lie above ``floor``; those times are skipped).
    The zero is interpolated linearly between the last time with κ > 0 and
    the first with κ ≤ 0 after it.

    For a truncation that is the Taylor polynomial of a function with radius
    of convergence R in t (the linear case, ``docs/paper2.md`` §4.2), the
    error of order M behaves like (t/R)^M, so κ(t) = ln(R/t) and the zero is
    R itself; where the truncations are not Taylor polynomials (softmax) the
    zero is the same measurement, an apparent radius, without that reading.
    Unlike :func:`convergence_horizon`, which asks whether the largest order
    is still the best, it uses every order and does not hinge on one pair.
    """
    kappa = np.array([exponential_rate(orders, errors[:, i], floor=floor)[0]
                      for i in range(len(times))])
    seen_positive = None
    for i in np.flatnonzero(np.isfinite(kappa)):
        if kappa[i] > 0:
            seen_positive = i
        elif seen_positive is not None:
            t0, t1 = float(times[seen_positive]), float(times[i])
            k0, k1 = float(kappa[seen_positive]), float(kappa[i])
            return t0 + (t1 - t0) * k0 / (k0 - k1)
    return None


def error_matrix(table: Mapping[str, np.ndarray], name: str = "q12") -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """(orders, times, errors[order, time]) of one Figure S6 table; NaN after a blow-up."""
    order = np.asarray(table["order"], dtype=np.int64)
    t = np.asarray(table["t_ode"], dtype=float)
    orders = np.unique(order)
    times = np.unique(t)
    err = np.full((orders.size, times.size), np.nan)
    err[np.searchsorted(orders, order), np.searchsorted(times, t)] = table[f"err_{name}"]
    return orders, times, err


def stack_truncations(truncations: Sequence[Mapping[int, Trajectory]], orders: Sequence[int],
                      times: np.ndarray, quantity: Callable[[Trajectory], np.ndarray]) -> np.ndarray:
    """``quantity`` of every truncation of every replicate, (n_replicates, n_orders, n_times).

    NaN where a truncation blew up or its q had left the PSD cone: from then
    on it is no admissible moment trajectory ([P Thm 2, remark]), so it is
    neither plotted nor compared.  The truncations share the time grid
    ``times`` of their references (a blown-up one is a prefix of it).
    """
    out = np.full((len(truncations), len(orders), times.size), np.nan)
    for s, by_order in enumerate(truncations):
        for j, m in enumerate(orders):
            run = by_order[m]
            n = len(run)
            if not np.allclose(run.t_ode, times[:n], rtol=1e-9, atol=1e-12):
                raise ValueError("truncations and references must share their time grid")
            t_left = float(run.extra["t_left_psd"][0]) if n else math.nan
            admissible = run.t_ode < (math.inf if math.isnan(t_left) else t_left)
            out[s, j, :n] = np.where(admissible, quantity(run), np.nan)
    return out


def truncation_overlap_errors(truncations: Sequence[Mapping[int, Trajectory]],
                              references: Sequence[Trajectory],
                              orders: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Overlap error of each order against the infinite-order reference, mean over replicates.

    Returns
    -------
    times : (n,) the references' grid
    overlaps : (n_replicates, n_orders, n) signed overlaps (:func:`stack_truncations`)
    errors : (n_orders, n) mean over replicates of |overlap − reference overlap|; NaN where
        a truncation is inadmissible in any replicate (an infinite error for
        :func:`convergence_horizon`).
    """
    times = references[0].t_ode
    overlaps = stack_truncations(truncations, orders, times, signed_overlap)
    reference = np.array([signed_overlap(ref) for ref in references])
    return times, overlaps, np.abs(overlaps - reference[:, None, :]).mean(axis=0)
