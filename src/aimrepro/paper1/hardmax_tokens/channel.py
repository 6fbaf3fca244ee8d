"""The hardmax output channel for any T ≥ 2: SE information from a fitted Fisher table, g_out by sampling."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from aimrepro.model import apply_link
from aimrepro.paper1.channels import OutputChannel, check_overlap, check_variance

from .arguments import check_count
from .exact import exact_posterior_mean
from .importance import posterior_moments
from .labels import winners_from_onehot
from .tables import FisherFit

__all__ = ["HardmaxTokens"]



@dataclass(frozen=True)
class HardmaxTokens(OutputChannel):
    """Hardmax output for any T ≥ 2: SE information from a :class:`FisherFit`, g_out by posterior sampling.

    * ``information(q, Q0) = 2 F_T(q/Q0)/(Q0 − q)``, so ``q̂ = α · information``
      as for every channel (module notes; §3.2).  ``fisher_scale``
      multiplies F (used by the delta method of :func:`solve_se`).
    * ``g_out(y, ω, V) = E[ζ | y, u]/√V`` with u = ω/√V, per sample by
      :func:`posterior_moments` with ``proposals`` off-diagonal proposals.
    * ``precision(y, ω, V) = −tr ∂g_out/∂ω = (M − tr Cov(ζ | y, u))/V``
      (∇²_u log Z = Cov − I, and the τ direction has posterior variance 1),
      from the same proposals as the last ``g_out`` call on the same arrays;
      its mean over samples is E|g_out|² (§5's Nishimori form) without the
      upward bias that the noise of ĝ would give |ĝ|².
    * ``log_z_out`` uses the exact Genz evaluation (slow; checks only).

    ``rng`` makes g_out reproducible: the same seed gives the same AMP run.
    """

    T: int = 3
    fisher: FisherFit | None = None
    proposals: int = 256
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0), compare=False, repr=False)
    fisher_scale: float = 1.0
    _cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    name: ClassVar[str] = "hardmax_tokens"

    def __post_init__(self):
        super().__post_init__()
        check_count("proposals", self.proposals, 2)
        if self.fisher is not None and self.fisher.T != self.T:
            raise ValueError(f"the Fisher table is for T={self.fisher.T}, the channel for T={self.T}")
        if not (math.isfinite(self.fisher_scale) and self.fisher_scale > 0):
            raise ValueError(f"fisher_scale must be a finite number > 0, got {self.fisher_scale}")

    def sample_labels(self, h, rng=None):
        return apply_link(h, "hardmax")

    def information(self, q, Q0):
        check_overlap(q, Q0)
        if self.fisher is None:
            raise ValueError("information needs a FisherFit (fit_fisher_table); this channel has none")
        return float(2.0 * self.fisher_scale * self.fisher.F(q / Q0) / (Q0 - q))

    def log_z_out(self, y, omega, V):
        V = check_variance(V)
        u = np.asarray(omega, dtype=float) / np.sqrt(V)[..., None]
        shape = u.shape[:-1]
        Z, _ = exact_posterior_mean(self.T, u.reshape(-1, self.m), winners_from_onehot(y).reshape(-1, self.T),
                                    gradient=False)
        return np.log(Z).reshape(shape)

    def _sample(self, y, omega, V):
        cached = self._cache.get("last")
        if cached is not None and cached[0] is y and cached[1] is omega and cached[2] == float(np.asarray(V)):
            return cached[3]
        V = check_variance(V)
        if V.ndim != 0:
            raise ValueError("this channel takes one scalar variance V")
        omega_arr = np.asarray(omega, dtype=float)
        u = omega_arr.reshape(-1, self.m) / math.sqrt(float(V))
        winners = winners_from_onehot(y).reshape(-1, self.T)
        moments = posterior_moments(self.T, u, winners, self.rng, proposals=self.proposals)
        g = moments.mean.reshape(omega_arr.shape) / math.sqrt(float(V))
        p = (self.m - moments.trace_cov).reshape(omega_arr.shape[:-1]) / float(V)
        self._cache["last"] = (y, omega, float(V), (g, p))
        return g, p

    def g_out(self, y, omega, V):
        return self._sample(y, omega, V)[0]

    def precision(self, y, omega, V):
        return self._sample(y, omega, V)[1]
