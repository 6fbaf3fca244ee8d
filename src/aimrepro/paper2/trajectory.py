"""Order parameters and trajectories, shared by online SGD and the reference flows.

The state of one student (k = 1) against one teacher (k = 2) is described
by the trace order parameters of ``docs/paper2.md`` §1 ([P eqs. 15, 397, 405–407]):

* t_k = Tr S_k/d (the pre-activation mean is m_k = √d t_k, [P §4.1]);
* Ψ_kl = Tr(S_k S_l)/d and Ω_kl = Tr(S_k S_lᵀ)/d (for symmetric matrices both
  are q_kl; for untied S = U Vᵀ, Ω = q⁽¹⁾ and Ψ = q⁽²⁾);
* the structural overlaps p_Ψ = Ψ − t tᵀ, p_Ω = Ω − t tᵀ (traces of the
  traceless parts S̊ = S − t I), the measure of informativeness: the tied
  uninformative state has p₁₂ = 0 but q₁₂ = t₁ t₂ > 0 ([P eq. 15]).

The weak-recovery overlap used throughout is
max(|p_Ψ,12|, |p_Ω,12|)/p_Ω,22: |p₁₂|/p₂₂ for tied attention, the criterion
of [P eq. 413] for direct S, normalised by the teacher's ‖S̊₂‖²_F/d.
Absolute values, because for even links −S* is also a global minimiser
(``docs/paper2.md`` §5, §8.7).

A :class:`Trajectory` holds the order parameters on a time grid in the
paper's time of the parametrisation (``t_ode``, ``docs/paper2.md`` §2), and
whether and when the run blew up.  It round-trips through a CSV table
(:meth:`Trajectory.columns`, :meth:`Trajectory.from_columns`); a blow-up is
stored as a last row with ``blew_up = true`` at ``t_ode = t_blowup``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ORDER_NAMES", "OrderParameters", "Trajectory", "first_crossing_time"]

#: Entries of :meth:`OrderParameters.as_vector`, in order (also the CSV column names).
ORDER_NAMES = ("t1", "t2", "Psi11", "Psi12", "Psi22", "Omega11", "Omega12", "Omega22")


@dataclass(frozen=True)
class OrderParameters:
    """Traces t (2,), Ψ (2, 2) and Ω (2, 2) of student and teacher (``docs/paper2.md`` §1)."""

    trace: np.ndarray
    Psi: np.ndarray
    Omega: np.ndarray

    def __post_init__(self) -> None:
        trace = np.asarray(self.trace, dtype=float)
        Psi = np.asarray(self.Psi, dtype=float)
        Omega = np.asarray(self.Omega, dtype=float)
        if trace.shape != (2,) or Psi.shape != (2, 2) or Omega.shape != (2, 2):
            raise ValueError(f"order parameters need trace (2,), Psi and Omega (2, 2), got "
                             f"{trace.shape}, {Psi.shape}, {Omega.shape}")
        object.__setattr__(self, "trace", trace)
        object.__setattr__(self, "Psi", 0.5 * (Psi + Psi.T))
        object.__setattr__(self, "Omega", 0.5 * (Omega + Omega.T))

    @classmethod
    def symmetric(cls, trace, q) -> OrderParameters:
        """Symmetric student and teacher: Ψ = Ω = q."""
        return cls(trace, q, q)

    def as_vector(self) -> np.ndarray:
        """(t₁, t₂, Ψ₁₁, Ψ₁₂, Ψ₂₂, Ω₁₁, Ω₁₂, Ω₂₂): the names of :data:`ORDER_NAMES`."""
        P, O = self.Psi, self.Omega
        return np.array([*self.trace, P[0, 0], P[0, 1], P[1, 1], O[0, 0], O[0, 1], O[1, 1]])

    @classmethod
    def from_vector(cls, v) -> OrderParameters:
        v = np.asarray(v, dtype=float)
        if v.shape != (len(ORDER_NAMES),):
            raise ValueError(f"an order-parameter vector has {len(ORDER_NAMES)} entries, "
                             f"got shape {v.shape}")
        return cls(v[:2], [[v[2], v[3]], [v[3], v[4]]], [[v[5], v[6]], [v[6], v[7]]])

    @property
    def q(self) -> np.ndarray:
        """q = (Ψ + Ω)/2: the overlap matrix of the symmetric parts, q = Ψ = Ω for symmetric S."""
        return 0.5 * (self.Psi + self.Omega)

    @property
    def p_Psi(self) -> np.ndarray:
        """Structural overlaps Tr(S̊_k S̊_l)/d = Ψ − t tᵀ ([P eq. 406])."""
        return self.Psi - np.outer(self.trace, self.trace)

    @property
    def p_Omega(self) -> np.ndarray:
        """Tr(S̊_k S̊_lᵀ)/d = Ω − t tᵀ ([P eq. 407])."""
        return self.Omega - np.outer(self.trace, self.trace)

    @property
    def overlap_ratio(self) -> float:
        """max(|p_Ψ,12|, |p_Ω,12|)/p_Ω,22: the weak-recovery overlap (module docstring)."""
        return float(max(abs(self.p_Psi[0, 1]), abs(self.p_Omega[0, 1])) / self.p_Omega[1, 1])

    @property
    def symmetric_overlap(self) -> float:
        """(p_Ω,12 + p_Ψ,12)/(p_Ω,22 + p_Ψ,22), signed: the overlap of S₁ + S₁ᵀ with S₂ + S₂ᵀ.

        Tr(S̊₁⁺ S̊₂⁺)/Tr(S̊₂⁺²) with S⁺ = S + Sᵀ (traces removed): the untied
        overlap of [P Fig. 3], normalised by the teacher (1 at S₁⁺ = S₂⁺).
        For one token it is Cov(G₁, G₂)/Var(G₂).
        """
        p_sum = self.p_Psi + self.p_Omega
        return float(p_sum[0, 1] / p_sum[1, 1])

    def mean(self, d: int) -> np.ndarray:
        """Pre-activation means m_k = Tr S_k/√d = √d t_k ([P §4.1])."""
        return math.sqrt(d) * self.trace


def first_crossing_time(times: np.ndarray, values: np.ndarray, threshold: float) -> float | None:
    """First time at which ``values`` reaches ``threshold``, linearly interpolated; None if never.

    Between the last record below the threshold and the first at or above it
    the crossing is placed by linear interpolation, so its resolution is
    better than the record spacing for smooth curves.
    """
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    above = np.flatnonzero(values >= threshold)
    if above.size == 0:
        return None
    i = int(above[0])
    if i == 0:
        return float(times[0])
    t0, t1, v0, v1 = times[i - 1], times[i], values[i - 1], values[i]
    return float(t0 + (threshold - v0) * (t1 - t0) / (v1 - v0))


@dataclass(frozen=True)
class Trajectory:
    """Order parameters on a time grid, and blow-up, of one run (SGD or a reference flow).

    Attributes
    ----------
    t_ode : (n,) ndarray
        Time in the paper's units of the parametrisation (``docs/paper2.md`` §2).
    order : (n, 8) ndarray
        :meth:`OrderParameters.as_vector` at each time.
    d : int
        Dimension (for the means m = √d t).
    blew_up : bool
        Whether the run stopped on a non-finite or runaway value.
    t_blowup : float
        ``t_ode`` of the blow-up (NaN if none).
    extra : dict of str to (n,) ndarray
        Further columns (``n_steps``, ``n_samples``, ``t_fast``, ``batch_loss``, ...).
    """

    t_ode: np.ndarray
    order: np.ndarray
    d: int
    blew_up: bool = False
    t_blowup: float = math.nan
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t = np.asarray(self.t_ode, dtype=float)
        order = np.asarray(self.order, dtype=float).reshape(t.size, len(ORDER_NAMES))
        object.__setattr__(self, "t_ode", t)
        object.__setattr__(self, "order", order)
        for name, column in self.extra.items():
            if np.shape(column) != t.shape:
                raise ValueError(f"column {name!r} has shape {np.shape(column)}, times {t.shape}")

    def __len__(self) -> int:
        return self.t_ode.size

    def at(self, i: int) -> OrderParameters:
        return OrderParameters.from_vector(self.order[i])

    def column(self, name: str) -> np.ndarray:
        """One order parameter (a name of :data:`ORDER_NAMES`) or extra column over time."""
        if name in ORDER_NAMES:
            return self.order[:, ORDER_NAMES.index(name)]
        return np.asarray(self.extra[name])

    @property
    def p12(self) -> np.ndarray:
        """Structural overlap p_Ψ,12 = Ψ₁₂ − t₁ t₂ over time (= p₁₂ for symmetric S)."""
        return self.column("Psi12") - self.column("t1") * self.column("t2")

    @property
    def overlap_ratio(self) -> np.ndarray:
        """max(|p_Ψ,12|, |p_Ω,12|)/p_Ω,22 over time."""
        t1, t2 = self.column("t1"), self.column("t2")
        p_psi = self.column("Psi12") - t1 * t2
        p_omega = self.column("Omega12") - t1 * t2
        return np.maximum(np.abs(p_psi), np.abs(p_omega)) / (self.column("Omega22") - t2 * t2)

    @property
    def symmetric_overlap(self) -> np.ndarray:
        """Signed overlap of S₁ + S₁ᵀ with S₂ + S₂ᵀ over time (:attr:`OrderParameters.symmetric_overlap`)."""
        t1, t2 = self.column("t1"), self.column("t2")
        p12 = self.column("Psi12") + self.column("Omega12") - 2.0 * t1 * t2
        p22 = self.column("Psi22") + self.column("Omega22") - 2.0 * t2 * t2
        return p12 / p22

    def weak_recovery_time(self, threshold: float = 0.3) -> float | None:
        """First t_ode with overlap ratio ≥ threshold (``docs/paper2.md`` §5), or None."""
        return first_crossing_time(self.t_ode, self.overlap_ratio, threshold)

    def weak_recovery_samples(self, threshold: float = 0.3) -> float | None:
        """Samples seen at the weak-recovery time N_wr ([P eq. 18]), interpolated; None if never.

        Needs the ``n_samples`` column of an SGD run (samples grow linearly in t_ode).
        """
        t_wr = self.weak_recovery_time(threshold)
        if t_wr is None:
            return None
        return float(np.interp(t_wr, self.t_ode, np.asarray(self.extra["n_samples"], float)))

    def blowup_diagnostics(self) -> dict:
        """``converged`` (no blow-up), ``blew_up`` and ``t_blowup`` (None if none), for a sidecar."""
        return {"converged": not self.blew_up, "blew_up": self.blew_up,
                "t_blowup": self.t_blowup if self.blew_up else None}

    # --- tables -----------------------------------------------------------------

    def columns(self) -> dict[str, np.ndarray]:
        """Columns for :func:`aimrepro.records.tables.write_table`, blow-up as a last NaN row."""
        n_rows = len(self) + (1 if self.blew_up else 0)
        t = np.append(self.t_ode, self.t_blowup) if self.blew_up else self.t_ode
        cols: dict[str, np.ndarray] = {"t_ode": t}
        for i, name in enumerate(ORDER_NAMES):
            col = self.order[:, i]
            cols[name] = np.append(col, np.nan) if self.blew_up else col
        cols["overlap_ratio"] = (np.append(self.overlap_ratio, np.nan) if self.blew_up
                                 else self.overlap_ratio)
        for name, col in self.extra.items():
            col = np.asarray(col)
            if self.blew_up:
                fill = -1 if np.issubdtype(col.dtype, np.integer) else np.nan
                col = np.append(col, np.array(fill, dtype=col.dtype))
            cols[name] = col
        cols["blew_up"] = np.arange(n_rows) >= len(self)
        return cols

    @classmethod
    def from_columns(cls, columns: Mapping[str, np.ndarray], d: int) -> Trajectory:
        """Inverse of :meth:`columns` (as read back by ``read_table``)."""
        blown = np.asarray(columns["blew_up"], dtype=bool)
        keep = ~blown
        t = np.asarray(columns["t_ode"], dtype=float)
        order = np.stack([np.asarray(columns[n], dtype=float)[keep] for n in ORDER_NAMES], axis=1)
        reserved = {"t_ode", "blew_up", "overlap_ratio", *ORDER_NAMES}
        extra = {n: np.asarray(c)[keep] for n, c in columns.items() if n not in reserved}
        return cls(t[keep], order, d, bool(blown.any()),
                   float(t[blown][0]) if blown.any() else math.nan, extra)
