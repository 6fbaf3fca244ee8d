"""Hardmax attention with T ≥ 2 tokens: Bayes-optimal state evolution and a GAMP-RIE channel.

``docs/paper1.md`` solves the hardmax output (row-wise one-hot argmax of the
symmetric T×T index matrix h, §1.3) only for T = 2 (§3.4, with the derivative
erratum B1 of §9).  This module gives the state evolution (SE, §3.2) and the
output function g_out of GAMP-RIE (§5) for any T, checked at T = 2 against the
exact channel :class:`aimrepro.paper1.channels.Hardmax2`.  The write-up, with
the measured numbers and costs, is ``docs/paper1.md`` §3.6.

Conventions
-----------
z-scale as in :mod:`aimrepro.paper1.channels`: h is stored as its M = T(T+1)/2
upper-triangular entries z_ab = τ_ab h_ab (τ_aa = 1, τ_{a<b} = √2), each of
variance 2 Q0 under the prior (§1.6).  A *label* is the tuple of row winners
w_a = argmax_b h_ab (the row one-hot y of the data, :func:`winners_from_onehot`).

Scale reduction (derived here)
------------------------------
The label is invariant under h → c h (c > 0) and under the global shift
h → h + c 1 1ᵀ (the direction τ in z-scale).  At the SE overlap q the channel
sees z = ω + √V ζ with ω ~ N(0, 2q I_M), V = 2(Q0 − q), ζ ~ N(0, I_M), so
with u = ω/√V and m = q/Q0

    u ~ N(0, λ I_M),   λ = m/(1 − m),   Z(y; u) = P_ζ(label(u + ζ) = y),
    g_out(y; ω, V) = ∇_ω log Z_out = E[ζ | y, u]/√V,

and the conjugate overlap q̂ = 4α E|g_out|² (§3.2, z-scale) becomes

    q̂ = 2α F_T(m)/(Q0 − q),     F_T(m) = E_{u, y} |E[ζ | y, u]|².

F_T is the Fisher information of the unit-noise channel; it depends on
(ρ, α, Q0) only through m, so one table of F_T serves every (ρ, α).
E[ζ | y, u] is orthogonal to τ (shift invariance); all sums below use the
projection P⊥ζ = ζ − τ̂(τ̂·ζ), τ̂ = τ/T, which removes a pure-noise direction.
Softmax has F = M − 1 for every m (``channels.Softmax.information``).

Nishimori estimator of F_T (no Z_out needed)
--------------------------------------------
Draw (u, ζ₀), set y = label(u + ζ₀).  By the Nishimori identity ζ₀ is a
posterior draw given (u, y); further posterior draws come from rejection
sampling: candidates c ~ N(0, I_M), kept when label(u + c) = y.  For K + 1
conditionally independent posterior draws x_0 = ζ₀, x_1..x_K, the pair mean
U = Σ_{i<j} P⊥x_i·P⊥x_j / (K(K+1)/2) has E[U | u, y] = |E[ζ | y, u]|².
Control variate: the candidates of the *first* block (b₁ per sample, kept or
not) are N(0, I) and independent of (u, ζ₀), so the same pair mean U_c over
{ζ₀, first block} has E[U_c | u, y] = 0; deep inside a label cell every
candidate is kept and U − U_c = 0 exactly.  The estimate is mean(U − β U_c)
with β the regression coefficient of U on U_c (bias O(1/n)).  The expected
number of candidates per posterior draw is E[1/Z(y; u)] = number of possible
labels (25 for T = 3, 218 for T = 4, :func:`possible_labels`), whatever m.

Table and interpolant
---------------------
G_T(x) = F_T(1 − x²)/x with x = √(1 − m) is smooth on [0, 1] (F ∝ λ^{-1/2}
as m → 1: only a boundary layer of the label cells carries information), so
a weighted least-squares Chebyshev polynomial of low degree in x fits the
table; at T = 2 a degree-6 fit to the exact values on the default grid is
within 1e−6 relative down to x = 0.003 (measured; the test asserts 1e−5),
far below the table noise (~1e−3 per node).  The fit is linear in
the table, so its covariance gives the standard error of F at any m, and the
MMSE's standard error follows by the delta method (:func:`solve_se`; a
parametric bootstrap of the coefficients agrees within 5 %, measured).
Large α: MMSE → Q0 (dof/(2α a_T))² with a_T = G_T(0) and dof = min(2ρ − ρ², 1).

g_out for GAMP-RIE (§5)
-----------------------
Per sample E[ζ | y, u] by Rao–Blackwellised importance sampling
(:func:`posterior_moments`): the diagonal entries are integrated
analytically given the off-diagonal ones.  Measured at T = 3 on 10⁴ SE pairs
(CPU, one thread): 256 proposals cost 1.7 s with noise |ĝ − g|² ≈ 0.6–1 % of
|g|²; rejection sampling (:func:`posterior_mean_rejection`) needs ~12 times
more CPU for the same noise; the exact Genz facet formula
(:func:`exact_posterior_mean`) costs 450–700 s.

Costs (CPU, one thread, measured)
---------------------------------
Default table (17 nodes, 2.8·10⁷ samples): T = 3 54 s, T = 4 280 s.  One SE
point with its delta-method error: ~20 ms; a 128-point curve 2–4 s; the
uniqueness scan of :func:`fixed_points` ~0.1 s per point.

Modules
-------
:mod:`.labels` (the label map), :mod:`.rejection` (SE pairs, rejection
sampling), :mod:`.exact` (Genz Z and posterior mean), :mod:`.importance`
(the importance-sampled g_out), :mod:`.fisher` (the Nishimori estimator),
:mod:`.tables` (table and fit), :mod:`.calibration` (a table's CPU cost),
:mod:`.channel` (:class:`HardmaxTokens`), :mod:`.state_evolution` (the SE root,
its error, the uniqueness scan); :mod:`.arguments` checks their arguments.
Everything public is importable from this package.
"""

from __future__ import annotations

from .calibration import *  # noqa: F401,F403
from .channel import *  # noqa: F401,F403
from .exact import *  # noqa: F401,F403
from .fisher import *  # noqa: F401,F403
from .importance import *  # noqa: F401,F403
from .labels import *  # noqa: F401,F403
from .rejection import *  # noqa: F401,F403
from .state_evolution import *  # noqa: F401,F403
from .tables import *  # noqa: F401,F403
from . import (calibration, channel, exact, fisher, importance, labels, rejection, state_evolution,
               tables)

__all__ = [name for module in (calibration, channel, exact, fisher, importance, labels, rejection,
                               state_evolution, tables) for name in module.__all__]
