"""Generalisation error of the AIM: the Bayes-optimal theory and what an estimate achieves on fresh data.

``docs/paper1.md`` §2 defines the Bayes-optimal generalisation error per new
sequence (X_new, y_new),

    E_gen = E ‖y_new − E[y_new | data, X_new]‖²_F,

and, in terms of the state-evolution overlap q (Q0 = 1 + ρ, V = Q0 − q),

    E_gen(q) = E_ω E_z ‖g(ω + √V z) − ĝ(ω)‖²_F,   ĝ(ω) = E_z' g(ω + √V z'),

with ω = √q ξ and ξ, z, z' ~ GOE_T independent (off-diagonal variance 1,
diagonal 2).  The paper never draws it.  This module computes it, the error
of the *plug-in* prediction g(ω) in the same picture, and both errors of an
estimate Ŝ (GAMP-RIE's) on a test set.

Normalisation
-------------
Per sequence, summed over the T×T entries of y (the squared Frobenius norm of
§2's definition, and the normalisation of ``model.plug_in_test_error``).
Divide by T² for an error per entry, by T for one per row (a row of y is a
probability vector).  For the hardmax link a wrongly predicted row costs 2.

Reduction to one row
--------------------
‖·‖²_F is a sum over the rows of y, and row a of g depends only on row a of
h.  The T entries of a row of a GOE_T matrix are *independent* (the diagonal
one of variance 2, the others of variance 1: each is a different
upper-triangular entry), so the T×T integral splits into T equal row terms.
The row softmax is invariant under a common shift of the row, so it depends
only on the T − 1 differences w_b = h_ab − h_aa (b ≠ a), Gaussian with
covariance Σ = I + 2J (J the all-ones matrix) per unit of variance:

    E_gen(q) = T · E_{m ~ N(0, qΣ)} E_{ζ ~ N(0, Σ)} ‖σ_β(m + √V ζ) − σ̂(m)‖²,

σ_β(w) = softmax(β (0, w_1, …, w_{T−1})), σ̂(m) = E_ζ σ_β(m + √V ζ).  For
softmax T = 3 the 6-dimensional integral of §2 becomes 2 + 2 dimensions,
computed exactly up to the quadrature error (below), no Monte Carlo.

Hardmax, T = 2, in closed form: row 1 of y is the one-hot of sign(u),
u = h11 − h12 ~ N(m, 3V) given ω with m ~ N(0, 3q), and its Bayes prediction
is (p, 1 − p), p = Φ(m/√(3V)); so ‖row − prediction‖² = 2(1[u > 0] − p)²
and, with the bivariate-normal orthant probability,

    E_gen(q) = 4 E_m p(1 − p) = 1 − (2/π) arcsin(q/Q0),
    E_plug-in(q) = 4 P(sign u ≠ sign m) = (4/π) arccos(√(q/Q0)).

Limits: E_gen(Q0) = 0 (perfect recovery); at α = 0 the SE overlap is q = ρ
(the prior mean √ρ I predicts the indices with ω = √ρ ξ), so E_gen(α → 0) =
E_gen(ρ), below the error E_gen(0) of a constant prediction.

Numerics
--------
The softmax integrals are nested tensor-product trapezoid rules in whitened
coordinates (w = L x, L Lᵀ = Σ; the outer x ~ N(0, q I), the inner
x ~ N(0, V I)), on nodes k·h, |k h| <= 8.5 standard deviations, with the
Gaussian density as weight.  The integrands are analytic in a strip: the
softmax of β w has its nearest complex singularity at |Im w_b| = π/β, and
each w_b is a combination of the x's of norm √3 (Σ_bb = 3), so the
strip in every x-axis is at least π/(√3 β) wide, and the trapezoid rule
converges like exp(−2π a/(β h)) for any a below π/√3: h = 0.5/β gives an
absolute error ≲ 2e−7 (measured against h = 0.3/β over q ∈ [0, Q0],
ρ ∈ {0.1, 0.5, 2}: ≤ 2e−7 for T = 2, ≤ 1.2e−8 for T = 3).  Where the
Gaussian is narrower than that (small q or small V) h = 0.7 × its standard
deviation, whose own trapezoid error is ~exp(−2π²/0.49) ≈ 3e−18.  Gauss–
Hermite rules, tried first, converge slowly here (a saturating softmax over
a wide Gaussian: 4e−4 with 32 × 24 nodes per axis at ρ = 2, T = 3).  The
inner variance is summed as Σ w ‖σ − σ̂‖² (never as a difference of second
moments), so E_gen keeps its relative accuracy as V → 0.  The tests check
that a step 0.6 × as large moves E_gen by less than
:data:`QUADRATURE_TOLERANCE` (ρ from 0.1 to 2, q from 0.01 Q0 to 0.999 Q0),
and that plain Monte Carlo over full GOE_T matrices agrees within 4
standard errors.  Cost per q: T = 2, under 10⁴
softmax rows; T = 3, up to ~10⁶ (ρ = 0.5) and ~3·10⁶ (ρ = 2), about a
second.  T >= 4 is refused: (T − 1)-dimensional rules squared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.special import ndtr

from aimrepro.paper1.channels import Hardmax2, Hardmax2Paper, OutputChannel, Softmax
from aimrepro.model import apply_link, indices

#: Token counts whose softmax integrals are implemented (tensor rules in T − 1 dimensions, squared).
SOFTMAX_TOKENS = (2, 3)

#: Largest step of the trapezoid rules, in whitened units times β (module notes: absolute error ≲ 2e−7).
TRAPEZOID_STEP = 0.5

#: Largest step relative to the standard deviation of the Gaussian weight (error ~ exp(−2π²/ratio²)).
TRAPEZOID_STEP_RATIO = 0.7

#: The rules cover this many standard deviations (Gaussian mass beyond: ~2e−17).
TRAPEZOID_SIGMAS = 8.5

#: What the convergence tests hold the default rules to (absolute, on E_gen; measured ≤ 2e−7).
QUADRATURE_TOLERANCE = 3e-7

#: Softmax rows evaluated at once (memory of one block: ~3 T times this many floats).
_BLOCK_ROWS = 500_000


# ---------------------------------------------------------------------------
# which link a channel predicts, and its per-row frame


def _link(channel: OutputChannel) -> tuple[str, float]:
    """("softmax", β) or ("hardmax", inf) for the channels whose Bayes prediction is implemented."""
    if isinstance(channel, Softmax):
        if channel.T not in SOFTMAX_TOKENS:
            raise ValueError(f"the softmax generalisation error is implemented for T in {SOFTMAX_TOKENS} "
                             f"(its rules grow as N^(T-1) per integral), got T={channel.T}")
        return "softmax", float(channel.beta)
    if isinstance(channel, Hardmax2):
        return "hardmax", math.inf
    raise ValueError(f"channel must be a Softmax or a Hardmax2 channel, got {type(channel).__name__}")


@lru_cache(maxsize=8)
def _row_factor(T: int) -> np.ndarray:
    """L with L Lᵀ = Σ = I + 2J, the covariance of one row's differences h_ab − h_aa per unit variance."""
    sigma = np.eye(T - 1) + 2.0 * np.ones((T - 1, T - 1))
    factor = np.linalg.cholesky(sigma)
    factor.setflags(write=False)
    return factor


def _trapezoid_rule(dim: int, variance: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (N^dim, dim) and weights (N^dim,) with Σ w f(x) ≈ E f(X), X ~ N(0, variance I_dim) (module notes).

    variance = 0 gives the single node 0.  Step h = min(step, 0.7 √variance),
    nodes k h out to 8.5 standard deviations, weights the Gaussian density
    normalised to sum 1.
    """
    if variance == 0.0:
        return np.zeros((1, dim)), np.ones(1)
    sd = math.sqrt(variance)
    h = min(step, TRAPEZOID_STEP_RATIO * sd)
    half = math.ceil(TRAPEZOID_SIGMAS * sd / h)
    x = h * np.arange(-half, half + 1)
    w = np.exp(-0.5 * x * x / variance)
    w /= w.sum()
    grids = np.meshgrid(*([x] * dim), indexing="ij")
    nodes = np.stack([g.ravel() for g in grids], axis=-1)
    weights = np.ones(1)
    for _ in range(dim):
        weights = np.multiply.outer(weights, w).ravel()
    return nodes, weights


def _row_softmax(w: np.ndarray, beta: float) -> np.ndarray:
    """softmax(β (0, w_1, …, w_{T−1})) over the last axis: (..., T − 1) → (..., T), self entry first."""
    logits = np.concatenate([np.zeros(w.shape[:-1] + (1,)), beta * w], axis=-1)
    logits -= logits.max(axis=-1, keepdims=True)  # no overflow; one exp (log_softmax takes two)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=-1, keepdims=True)
    return logits


def _check_overlaps(q, Q0) -> tuple[np.ndarray, float]:
    Q0 = float(Q0)
    if not (math.isfinite(Q0) and Q0 > 0):
        raise ValueError(f"Q0 must be a finite number > 0, got {Q0}")
    q = np.asarray(q, dtype=float)
    if not np.all(np.isfinite(q)) or np.any((q < 0) | (q > Q0)):
        raise ValueError(f"the overlap q must satisfy 0 <= q <= Q0 = {Q0}, got {q}")
    return q, Q0


def _check_step(step) -> float:
    step = TRAPEZOID_STEP if step is None else step
    if not (isinstance(step, (int, float, np.floating)) and math.isfinite(step) and step > 0):
        raise ValueError(f"step must be a finite number > 0, got {step!r}")
    return float(step)


# ---------------------------------------------------------------------------
# theory at an overlap q


def _softmax_row_errors(q: float, Q0: float, T: int, beta: float, step: float) -> tuple[float, float]:
    """(Bayes, plug-in) error of one row at overlap q: E‖σ − σ̂(m)‖² and E‖σ − σ(m)‖².  O(N_out N_in T)."""
    V = Q0 - q
    if V == 0.0:
        return 0.0, 0.0
    factor = _row_factor(T)
    u, wu = _trapezoid_rule(T - 1, q, step / beta)
    v, wv = _trapezoid_rule(T - 1, V, step / beta)
    means = u @ factor.T
    noise = v @ factor.T
    bayes = plugin = 0.0
    block = max(1, _BLOCK_ROWS // v.shape[0])
    for start in range(0, means.shape[0], block):
        m = means[start:start + block]
        probs = _row_softmax(m[:, None, :] + noise[None, :, :], beta)  # (block, N_in, T)
        mean_prob = np.einsum("bit,i->bt", probs, wv)
        spread = np.einsum("bi,i->b", np.sum((probs - mean_prob[:, None, :]) ** 2, axis=-1), wv)
        miss = np.einsum("bi,i->b", np.sum((probs - _row_softmax(m, beta)[:, None, :]) ** 2, axis=-1), wv)
        bayes += float(spread @ wu[start:start + block])
        plugin += float(miss @ wu[start:start + block])
    return bayes, plugin


def _errors_at_overlaps(channel, q, Q0, step):
    link, beta = _link(channel)
    q, Q0 = _check_overlaps(q, Q0)
    if link == "hardmax":
        ratio = np.clip(q / Q0, 0.0, 1.0)
        return 1.0 - (2.0 / np.pi) * np.arcsin(ratio), (4.0 / np.pi) * np.arccos(np.sqrt(ratio))
    T = channel.T
    step = _check_step(step)
    flat = [_softmax_row_errors(float(x), Q0, T, beta, step) for x in q.ravel()]
    bayes = T * np.array([b for b, _ in flat]).reshape(q.shape)
    plugin = T * np.array([p for _, p in flat]).reshape(q.shape)
    return bayes, plugin


def bayes_generalisation_error(channel: OutputChannel, q, Q0: float, *,
                               step: float | None = None) -> np.ndarray:
    """Bayes-optimal generalisation error E_gen(q) per sequence, summed over the T×T entries (module notes).

    Parameters
    ----------
    channel : ``Softmax`` (T = 2, 3, any β) or ``Hardmax2`` (the link decides; for
        ``Hardmax2Paper`` the hardmax link is used: the formula at q does not involve g_out)
    q : overlaps, any shape, 0 <= q <= Q0
    Q0 : 1 + ρ, the second moment of S per dimension
    step : largest trapezoid step × β, softmax only (default :data:`TRAPEZOID_STEP`)

    Returns
    -------
    ndarray of the shape of q.  Softmax: O(T N_out N_in) per q (module notes); hardmax: closed form.
    """
    return _errors_at_overlaps(channel, q, Q0, step)[0]


def plugin_generalisation_error(channel: OutputChannel, q, Q0: float, *,
                                step: float | None = None) -> np.ndarray:
    """Error E‖g(ω + √V z) − g(ω)‖²_F of the plug-in prediction g(ω) at overlap q (module notes).

    The prediction an estimate Ŝ with the Bayes overlap makes by applying
    the link to its own indices; never below :func:`bayes_generalisation_error`.
    Arguments and cost as there.
    """
    return _errors_at_overlaps(channel, q, Q0, step)[1]


# ---------------------------------------------------------------------------
# along alpha, through the state evolution


@dataclass(frozen=True)
class GeneralisationCurve:
    """Bayes-optimal and plug-in generalisation errors along α, with the SE point each comes from."""

    channel: str
    T: int
    rho: float
    beta: float
    alpha: np.ndarray
    q: np.ndarray
    mmse: np.ndarray
    bayes: np.ndarray
    plugin: np.ndarray
    se_converged: np.ndarray
    settings: dict = field(default_factory=dict)

    def columns(self) -> dict:
        return {"alpha": self.alpha, "q": self.q, "mmse": self.mmse, "gen_bayes": self.bayes,
                "gen_plugin": self.plugin, "se_converged": self.se_converged}


def generalisation_curve(channel: OutputChannel, alphas, rho: float, *, tol: float = 1e-10,
                         step: float | None = None) -> GeneralisationCurve:
    """E_gen(α) = E_gen(q(α)) with q(α) the SE fixed point (``state_evolution.se_curve``).

    ``Hardmax2Paper`` is refused: its overlap comes from a g_out that is not a
    posterior derivative (erratum B1), so E_gen at it is no Bayes error.
    """
    from aimrepro.paper1.state_evolution import se_curve

    if isinstance(channel, Hardmax2Paper):
        raise ValueError("channel hardmax_paper has no Bayes-optimal overlap (erratum B1): use hardmax")
    link, beta = _link(channel)
    points = se_curve(channel, alphas, rho, tol=tol)
    Q0 = 1.0 + float(rho)
    q = np.array([min(p.q, Q0) for p in points])
    bayes, plugin = _errors_at_overlaps(channel, q, Q0, step)
    settings = {"quadrature": f"trapezoid, step {_check_step(step):g}/beta" if link == "softmax"
                else "closed form", "se_tol": tol}
    return GeneralisationCurve(channel.name, channel.T, float(rho), beta,
                               np.array([p.alpha for p in points]), q, np.array([p.mmse for p in points]),
                               bayes, plugin, np.array([p.converged for p in points]), settings)


# ---------------------------------------------------------------------------
# an estimate on a test set


def bayes_prediction(channel: OutputChannel, h_mean, V: float, *, step: float | None = None) -> np.ndarray:
    """ŷ = E_z g(h_mean + √V z), z ~ GOE_T, for each sequence: (n, T, T) → (n, T, T).

    The posterior-mean prediction when the indices of a new sequence are
    Gaussian around h_mean with variance V per off-diagonal entry (2V on the
    diagonal): the SE picture of §2, and GAMP-RIE's with h_mean the indices of
    Ŝ and V = Ĉ (its predicted error; ``amp`` module notes).  V = 0 gives the
    plug-in g(h_mean).

    Parameters
    ----------
    channel : ``Softmax`` (T = 2, 3) or ``Hardmax2``
    h_mean : (n, T, T) symmetric mean indices
    V : posterior variance of an off-diagonal index, >= 0
    step : largest trapezoid step × β, softmax only (default :data:`TRAPEZOID_STEP`)

    Returns
    -------
    (n, T, T) rows of probabilities.  Softmax: O(n T² N) with N the nodes of the
    (T − 1)-dimensional rule (~10³ for T = 3); hardmax: O(n).
    """
    link, beta = _link(channel)
    h_mean = np.asarray(h_mean, dtype=float)
    T = channel.T
    if h_mean.ndim != 3 or h_mean.shape[1:] != (T, T):
        raise ValueError(f"h_mean must have shape (n, {T}, {T}), got {h_mean.shape}")
    V = float(V)
    if not (math.isfinite(V) and V >= 0):
        raise ValueError(f"V must be a finite number >= 0, got {V}")
    if V == 0.0:
        return apply_link(h_mean, link, beta=beta if link == "softmax" else 1.0)
    if link == "hardmax":
        scale = math.sqrt(3.0 * V)
        p1 = ndtr((h_mean[:, 0, 0] - h_mean[:, 0, 1]) / scale)
        p2 = ndtr((h_mean[:, 1, 1] - h_mean[:, 0, 1]) / scale)
        return np.stack([np.stack([p1, 1.0 - p1], -1), np.stack([1.0 - p2, p2], -1)], axis=1)
    v, wv = _trapezoid_rule(T - 1, V, _check_step(step) / beta)
    noise = v @ _row_factor(T).T
    out = np.empty_like(h_mean)
    block = max(1, _BLOCK_ROWS // v.shape[0])
    for a in range(T):
        others = [b for b in range(T) if b != a]
        order = [a] + others  # _row_softmax puts the self entry first
        diffs = h_mean[:, a, others] - h_mean[:, a, a:a + 1]
        for start in range(0, diffs.shape[0], block):
            probs = _row_softmax(diffs[start:start + block, None, :] + noise[None], beta)
            out[start:start + block, a, order] = np.einsum("bit,i->bt", probs, wv)
    return out


@dataclass(frozen=True)
class HeldOutErrors:
    """Generalisation errors of an estimate on labelled test sequences (per sequence, Frobenius²).

    ``bayes``: of the posterior-mean prediction E_z g(ĥ + √V z); ``plugin``: of g(ĥ);
    ``V``: the posterior variance used; ``n_test``: number of sequences.
    """

    bayes: float
    plugin: float
    V: float
    n_test: int


def held_out_errors(channel: OutputChannel, X_test, y_test, S_hat, V: float) -> HeldOutErrors:
    """Bayes-prediction and plug-in test errors of an estimate Ŝ with posterior index variance V.

    ĥ = (X Ŝ Xᵀ − Tr Ŝ·I)/√d per test sequence (``model.indices``), then
    (1/n) Σ_μ ‖y_μ − ŷ_μ‖²_F for ŷ = :func:`bayes_prediction` and ŷ = g(ĥ).
    O(n_test T d²) for the indices plus the prediction's cost.
    """
    link, beta = _link(channel)
    X_test = np.asarray(X_test, dtype=float)
    y_test = np.asarray(y_test, dtype=float)
    n, T = X_test.shape[:2]
    if T != channel.T or y_test.shape != (n, T, T):
        raise ValueError(f"X_test (n, {channel.T}, d) and y_test (n, {channel.T}, {channel.T}) must match "
                         f"the channel, got {X_test.shape} and {y_test.shape}")
    h_mean = indices(X_test, np.asarray(S_hat, dtype=float))
    bayes = bayes_prediction(channel, h_mean, V)
    plugin = apply_link(h_mean, link, beta=beta if link == "softmax" else 1.0)
    per_sequence = (lambda pred: float(np.mean(np.sum((y_test - pred) ** 2, axis=(1, 2)))))
    return HeldOutErrors(per_sequence(bayes), per_sequence(plugin), float(V), int(n))

