"""Gaussian special functions for the hardmax output channel.

Private helpers shared by the approximate-message-passing iteration and its
state evolution: the log-density of the standard normal, the logarithm of
the standard bivariate normal CDF and its partial derivatives (accurate far
into the lower tail, where the naive formulas underflow), and fixed
quadrature rules.

All functions are pure, vectorised (arguments broadcast against each other
like numpy ufuncs), warning-free on finite and infinite inputs, and use no
random numbers.  Only numpy and scipy are required.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "log_phi",
    "ndtr2",
    "log_ndtr2",
    "log_dndtr2",
    "dlog_ndtr2",
    "hermite_rule",
    "legendre_rule",
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)

#: The Owen's-T ("bulk") formula is used when ``min(h, k) >= _BULK_MIN_ARG``
#: and its value is at least ``_BULK_MIN_PROB``.  Its absolute error is a few
#: 1e-17 (the terms that cancel are at most Phi(h), Phi(k) <= 1 and are small
#: themselves when h, k < 0), so the relative error of Phi2, i.e. the
#: absolute error of log Phi2, stays below ~1e-13 above this probability.
_BULK_MIN_ARG = -2.0
_BULK_MIN_PROB = 1e-3

#: Number of Gauss-Laguerre nodes of the tail integral.  With the scale
#: chosen in :func:`_log_ndtr2_tail`, 40 nodes reach the float64 rounding
#: level (<= 4e-14 absolute near the switch, ~1e-15 relative deep in the
#: tail) for |corr| <= 1/2 (and 0.7), 6e-10 for |corr| = 0.9, 2e-9 for
#: corr = 0.95 and 7e-8 for corr = -0.95 (worst just below the switch).
#: For comparison, 32 nodes give 3e-12 / 1e-8 / 5e-7 and 48 nodes give
#: rounding level / 5e-11 / 7e-9 (measured against mpmath).
_N_LAGUERRE = 40

#: Finite arguments are clipped to this magnitude, so that squares and
#: products stay finite.  Phi(1e100) == 1 in float64, so clipping from above
#: is exact; from below the result is ~ -5e199, where float64 has no
#: meaningful precision left anyway.
_CLIP = 1e100

#: Cap on the exponent of dlog_ndtr2 (see there).
_MAX_LOG_DLOG = 700.0


def _special():
    """scipy.special, imported on first use: ~0.15 s of start-up that callers needing none of
    its functions (the softmax state evolution, ``aimrepro se``) do not pay."""
    from scipy import special

    return special


@functools.lru_cache(maxsize=None)
def _laguerre_log_rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Laguerre nodes ``u`` and ``log(w) + u`` (read-only)."""
    u, w = _special().roots_laguerre(n)
    logw = np.log(w) + u
    u.setflags(write=False)
    logw.setflags(write=False)
    return u, logw


@functools.lru_cache(maxsize=None)
def _hermitenorm_roots(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = _special().roots_hermitenorm(n)
    w = w / np.sqrt(2.0 * np.pi)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


@functools.lru_cache(maxsize=None)
def _legendre_roots(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = _special().roots_legendre(n)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"number of nodes must be a positive integer, got {n!r}")
    return int(n)


def _scalarize(a: np.ndarray):
    """Return a numpy scalar for 0-d arrays, the array otherwise."""
    return a[()] if a.ndim == 0 else a


def _prepare(h, k, corr):
    """Broadcast, validate `corr`, clip finite `h`, `k` to ``±_CLIP``."""
    h, k, corr = np.broadcast_arrays(
        np.asarray(h, dtype=float), np.asarray(k, dtype=float),
        np.asarray(corr, dtype=float),
    )
    if not np.all(np.abs(corr) < 1.0):
        raise ValueError("corr must satisfy |corr| < 1 (and not be NaN)")
    # np.clip would also map +-inf to +-_CLIP: clip finite values only.
    h = np.where(np.isfinite(h), np.clip(h, -_CLIP, _CLIP), h)
    k = np.where(np.isfinite(k), np.clip(k, -_CLIP, _CLIP), k)
    return h, k, corr


def _mills(x: np.ndarray) -> np.ndarray:
    """phi(x) / Phi(x) for finite ``x``, without overflow.

    For ``x < -1e3`` the difference ``log_phi - log_ndtr`` of two numbers of
    size ``x**2/2`` would lose ``x**2 * eps`` absolutely (and overflow exp
    for ``|x| > 1e8``); there the asymptotic series ``-x - 1/x + 2/x**3``
    (next term ``-10/x**5``) is exact to float64 instead.
    """
    far = x < -1e3
    xs = np.where(far, -1e3, x)
    near = np.exp(log_phi(xs) - _special().log_ndtr(xs))
    xf = np.where(far, x, -1e3)
    inv = 1.0 / xf
    return np.where(far, -xf - inv + 2.0 * inv**3, near)  # inv**3 may underflow: fine


def log_phi(x):
    r"""Logarithm of the standard normal density.

    Parameters
    ----------
    x : array_like
        Points of evaluation.

    Returns
    -------
    ndarray or float
        :math:`\log\varphi(x)`, same shape as `x`; ``-inf`` at ``x = ±inf``.

    Notes
    -----
    .. math:: \log\varphi(x) = -\tfrac12 x^2 - \tfrac12\log(2\pi).

    Numerics: exact up to float64 rounding (relative error ~1e-16) for
    ``|x| < 1.3e154``; beyond that ``x**2`` overflows and the result is
    ``-inf`` (as for ``x = ±inf``), without a warning.
    """
    x = np.asarray(x, dtype=float)
    xc = np.clip(x, -1e154, 1e154)  # keep x*x finite; 5e307 > any usable value
    out = np.where(np.abs(x) > 1e154, -np.inf, -0.5 * xc * xc - _LOG_SQRT_2PI)
    return _scalarize(out)


def _safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` without overflow or 0/0 warnings.

    Where the quotient would overflow (``den`` zero or tiny) it is
    ``sign(num) * inf`` (``den`` is treated as +0); the caller overrides the
    ``num == den == 0`` case.
    """
    ok = np.abs(num) * 1e-300 < np.abs(den)  # underflow is silent, overflow not
    out = np.where(den < 0, -1.0, 1.0) * np.copysign(np.inf, num)
    return np.divide(num, den, out=out, where=ok)


def _ndtr2_bulk(h: np.ndarray, k: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """Phi2(h, k; corr) from Owen's T function (finite arguments)."""
    s = np.sqrt((1.0 - corr) * (1.0 + corr))
    a_h = _safe_ratio((k - corr * h) / s, h)
    a_k = _safe_ratio((h - corr * k) / s, k)
    both0 = (h == 0) & (k == 0)
    a0 = np.sqrt((1.0 - corr) / (1.0 + corr))  # limit of a_h = a_k on h = k -> 0
    a_h = np.where(both0, a0, a_h)
    a_k = np.where(both0, a0, a_k)
    hk = h * k
    beta = np.where((hk < 0) | ((hk == 0) & (h + k < 0)), 0.5, 0.0)
    p = (0.5 * _special().ndtr(h) + 0.5 * _special().ndtr(k)
         - _special().owens_t(h, a_h) - _special().owens_t(k, a_k) - beta)
    return np.minimum(p, 1.0)


def ndtr2(h, k, corr):
    """Φ2(h, k; corr) itself, by Owen's T formula, for finite h, k and |corr| < 1.

    Notes
    -----
    Accurate in *absolute* terms (a few 1e-17: the cancelling terms are at
    most 1), not in relative terms: where Φ2 is small use :func:`log_ndtr2`.
    Meant for expectations in which Φ2 multiplies a bounded quantity, where
    absolute accuracy is what counts; about 30 times cheaper than the tail
    integral of :func:`log_ndtr2`.
    """
    h, k, corr = _prepare(h, k, corr)
    if not (np.all(np.isfinite(h)) and np.all(np.isfinite(k))):
        raise ValueError("ndtr2 needs finite h and k; use log_ndtr2 for infinite limits")
    shape = h.shape
    h, k, corr = (np.atleast_1d(a) for a in (h, k, corr))  # _ndtr2_bulk writes through masks
    return _scalarize(np.maximum(_ndtr2_bulk(h, k, corr), 0.0).reshape(shape))


def _log_ndtr2_tail(lo: np.ndarray, hi: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """log Phi2 by Gauss-Laguerre integration over ``x <= lo = min(h, k)``.

    ``lo <= hi`` finite.  With ``x = lo - v``,
    ``f(x) = phi(x) Phi((hi - corr x)/s)`` and
    ``log phi(lo - v) = log phi(lo) + lo v - v^2/2`` (exact, and free of the
    cancellation in ``(lo - v)**2`` when ``|lo|`` is large).
    """
    s = np.sqrt((1.0 - corr) * (1.0 + corr))
    c = corr / s
    t = (hi - corr * lo) / s
    # Inverse Mills ratio M = phi(t)/Phi(t) and the derivatives of
    # g(x) = log f(x) at x = lo:  g' = -lo - c M,  g'' = -1 - c^2 M (t + M).
    m = _mills(t)
    slope = -lo - c * m
    # M (t + M) lies in (0, 1) and tends to 1 as t -> -inf; clip the rounding
    # error of the cancellation in t + M.
    mtm = np.where(t < -1e3, 1.0, np.clip(m * (t + m), 0.0, 1.0))
    curv = 1.0 + c * c * mtm
    # Scale lam: positive root of lam^2 = slope*lam + curv, i.e. the quadratic
    # model of the log-integrand drops by exactly 1 at v = 1/lam.  lam ~ slope
    # deep in the tail (slope^2 >> curv), lam >= sqrt(curv) >= 1 whenever
    # slope >= 0; this keeps the Laguerre integrand e^u f(lo - u/lam)/f(lo)
    # close to a constant.  (A bare max(slope, 1) needs ~1.5x the nodes for
    # the same accuracy near the switch.)  Stable form of the root for
    # slope < 0, which occurs only for large positive corr near the switch.
    root = np.sqrt(slope * slope + 4.0 * curv)
    lam = 0.5 * (slope + root)
    neg = slope < 0
    lam[neg] = 2.0 * curv[neg] / (root[neg] - slope[neg])
    u, logw = _laguerre_log_rule(_N_LAGUERRE)
    v = u / lam[..., None]
    terms = (logw + lo[..., None] * v - 0.5 * v * v
             + _special().log_ndtr(t[..., None] + c[..., None] * v))
    return log_phi(lo) - np.log(lam) + _special().logsumexp(terms, axis=-1)


def log_ndtr2(h, k, corr):
    r"""Logarithm of the standard bivariate normal CDF.

    Parameters
    ----------
    h, k : array_like
        Upper integration limits; ``±inf`` allowed.
    corr : array_like
        Correlation coefficient, ``|corr| < 1``.  Accuracy is documented for
        ``|corr| <= 0.95``.  `h`, `k` and `corr` broadcast against each other.

    Returns
    -------
    ndarray or float
        :math:`\log\Phi_2(h, k; \rho)` with the broadcast shape (a numpy
        scalar for scalar inputs).  ``log Phi(k)`` if ``h = +inf``,
        ``log Phi(h)`` if ``k = +inf``, ``-inf`` if ``h`` or ``k`` is
        ``-inf``, NaN if ``h`` or ``k`` is NaN.

    Raises
    ------
    ValueError
        If any ``|corr| >= 1`` or `corr` is NaN.

    Notes
    -----
    :math:`\Phi_2(h, k; \rho) = P(X \le h, Y \le k)` for standard normal
    :math:`X, Y` with correlation :math:`\rho`; write
    :math:`s = \sqrt{1 - \rho^2}`, :math:`\ell = \min(h, k)`,
    :math:`u = \max(h, k)`.

    *Bulk* (``min(h, k) >= -2`` and :math:`\Phi_2 \ge 10^{-3}`), Owen's T:

    .. math::
        \Phi_2 = \tfrac12\Phi(h) + \tfrac12\Phi(k) - T(h, a_h) - T(k, a_k)
                 - \beta, \quad
        a_h = \frac{k - \rho h}{h s}, \quad a_k = \frac{h - \rho k}{k s},

    with :math:`\beta = 1/2` if :math:`hk < 0` or (:math:`hk = 0` and
    :math:`h + k < 0`), else 0.  At :math:`h = 0 \ne k`,
    :math:`a_h = \operatorname{sign}(k)\,\infty`; at :math:`h = k = 0`,
    :math:`a_h = a_k = \sqrt{(1-\rho)/(1+\rho)}`.

    *Tail* (otherwise):

    .. math::
        \log\Phi_2 = \log\int_{-\infty}^{\ell} \varphi(x)\,
                     \Phi\!\left(\frac{u - \rho x}{s}\right) dx,

    evaluated with :math:`x = \ell - t/\lambda` and a 40-node
    Gauss-Laguerre rule in :math:`t`,

    .. math::
        \log\Phi_2 \approx \log\varphi(\ell) - \log\lambda
          + \operatorname{logsumexp}_i\Big[\log w_i + t_i + \ell v_i
          - \tfrac12 v_i^2 + \log\Phi\Big(\frac{u - \rho\ell}{s}
          + \frac{\rho}{s} v_i\Big)\Big], \quad v_i = t_i/\lambda,

    (``log_ndtr`` for the inner factor).  :math:`\lambda` is the positive
    root of :math:`\lambda^2 = g'\lambda + |g''|`, where :math:`g'` (the
    slope) and :math:`g''` are the first two derivatives of the
    log-integrand with respect to :math:`\ell - x` at :math:`x = \ell`:
    :math:`\lambda \approx g'` deep in the tail and
    :math:`\lambda \ge \sqrt{|g''|} \ge 1` whenever :math:`g' \ge 0`.

    Numerics: the switch at ``min(h, k) = -2`` keeps the Owen's-T
    cancellation harmless (there :math:`\Phi_2 \ge \Phi(-2)^2 \approx
    5\cdot10^{-4}` for :math:`\rho \ge 0`); the extra condition
    :math:`\Phi_2 \ge 10^{-3}` sends the small values that negative
    :math:`\rho` produces above the threshold (e.g. :math:`h = k = -1`,
    :math:`\rho = -0.9`) to the tail integral, which is accurate there.
    Against 40-digit mpmath values (about 2300 points checked during
    development, 136 kept in the tests) the absolute error of
    :math:`\log\Phi_2` is, for ``|corr| <= 1/2``: <= 4e-14 for
    ``min(h, k) >= -2`` (tests enforce 1e-12) and in the tail float64
    rounding, <= 4e-14 near the switch and <= 1e-15 relative down to
    ``h = k = -40`` (``log Phi2`` down to -3210; tests enforce
    ``1e-12 + 1e-14 |log Phi2|``).  For ``|corr| = 0.9``: <= 6e-10 (tests
    enforce 5e-9); ``corr = 0.95``: 2e-9; ``corr = -0.95``: 7e-8; the
    largest errors sit just below ``min(h, k) = -2``.  The two regimes agree
    to <= 1e-12 on both switches for ``|corr| <= 1/2`` (tested).  Finite
    arguments are clipped to ``±1e100`` (exact from above; from below the
    result is ~ -5e199 with float64 relative accuracy).
    """
    h, k, corr = _prepare(h, k, corr)
    out = np.empty(h.shape)

    fin = np.isfinite(h) & np.isfinite(k)
    # Infinite limits: Phi2(+inf, k) = Phi(k); any -inf gives 0.
    if not np.all(fin):
        inf_h = h == np.inf
        inf_k = k == np.inf
        out[inf_h] = _special().log_ndtr(k[inf_h])
        out[inf_k] = _special().log_ndtr(h[inf_k])
        out[(h == -np.inf) | (k == -np.inf)] = -np.inf
        out[np.isnan(h) | np.isnan(k)] = np.nan

    hf, kf, rf = h[fin], k[fin], corr[fin]
    lo = np.minimum(hf, kf)
    hi = np.maximum(hf, kf)
    res = np.empty(lo.shape)

    cand = np.flatnonzero(lo >= _BULK_MIN_ARG)
    p = _ndtr2_bulk(lo[cand], hi[cand], rf[cand])
    good = p >= _BULK_MIN_PROB
    res[cand[good]] = np.log(p[good])

    tail = np.ones(lo.shape, dtype=bool)
    tail[cand[good]] = False
    res[tail] = _log_ndtr2_tail(lo[tail], hi[tail], rf[tail])

    out[fin] = res
    return _scalarize(out)


def _log_dndtr2_one(a: np.ndarray, b: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """log d/da Phi2(a, b; corr) = log phi(a) + log Phi((b - corr a)/s)."""
    s = np.sqrt((1.0 - corr) * (1.0 + corr))
    fa = np.isfinite(a)
    ac = np.where(fa, a, 0.0)
    # Where b is infinite the argument is b itself (corr a / s is finite);
    # where a is infinite phi(a) = 0 and the argument is irrelevant.
    arg = np.where(np.isfinite(b), (b - corr * ac) / s, b)
    out = log_phi(ac) + _special().log_ndtr(arg)
    out = np.where(fa, out, -np.inf)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, out)


def log_dndtr2(h, k, corr):
    r"""Logarithms of the partial derivatives of the bivariate normal CDF.

    Parameters
    ----------
    h, k, corr : array_like
        As in :func:`log_ndtr2` (broadcast; ``|corr| < 1``).

    Returns
    -------
    log_dh, log_dk : ndarray or float
        :math:`\log\partial_h\Phi_2(h, k; \rho)` and
        :math:`\log\partial_k\Phi_2(h, k; \rho)` with the broadcast shape.
        ``-inf`` where the differentiated argument is ``±inf`` or the other
        one is ``-inf``.

    Notes
    -----
    .. math::
        \partial_h \Phi_2 = \varphi(h)\,\Phi\!\left(\frac{k - \rho h}{s}\right),
        \qquad
        \partial_k \Phi_2 = \varphi(k)\,\Phi\!\left(\frac{h - \rho k}{s}\right),
        \qquad s = \sqrt{1 - \rho^2},

    evaluated as ``log_phi + log_ndtr``.  Subtract :func:`log_ndtr2` to get
    the derivatives of :math:`\log\Phi_2` in log form.

    Numerics: each term is computed to float64 relative accuracy of
    ``log_ndtr`` (~1e-15) for all finite arguments; no underflow, since
    nothing leaves log space.
    """
    h, k, corr = _prepare(h, k, corr)
    return _scalarize(_log_dndtr2_one(h, k, corr)), _scalarize(_log_dndtr2_one(k, h, corr))


def _dlog_limit(a: np.ndarray, b: np.ndarray, corr: np.ndarray) -> np.ndarray:
    """d/da log Phi2 where an argument is infinite (limits, see dlog_ndtr2)."""
    out = np.full(a.shape, np.nan)
    # a = +inf: Phi2 no longer depends on a.
    out[a == np.inf] = 0.0
    # b = +inf (a finite or -inf): d/da log Phi(a) = phi(a)/Phi(a).
    sel = (b == np.inf) & np.isfinite(a)
    out[sel] = _mills(a[sel])
    # a = -inf: the partial derivative with respect to a diverges.
    out[a == -np.inf] = np.inf
    # b = -inf, a finite: limit b -> -inf at fixed a.  Given Y <= b -> -inf,
    # X concentrates near corr * b, so the derivative tends to 0 (corr > 0),
    # +inf (corr < 0), or phi(a)/Phi(a) (corr = 0).
    sel = (b == -np.inf) & np.isfinite(a)
    lim = np.where(corr[sel] > 0, 0.0, np.inf)
    r0 = corr[sel] == 0
    asel = a[sel]
    lim[r0] = _mills(asel[r0])
    out[sel] = lim
    out[np.isnan(a) | np.isnan(b)] = np.nan
    return out


def dlog_ndtr2(h, k, corr):
    r"""Partial derivatives of :math:`\log\Phi_2(h, k; \rho)`.

    Parameters
    ----------
    h, k, corr : array_like
        As in :func:`log_ndtr2` (broadcast; ``|corr| < 1``).

    Returns
    -------
    d_h, d_k : ndarray or float
        :math:`\partial_h\log\Phi_2` and :math:`\partial_k\log\Phi_2`, both
        non-negative, with the broadcast shape.

    Notes
    -----
    .. math::
        \partial_h \log\Phi_2 = \exp\!\left(\log\varphi(h)
            + \log\Phi\!\left(\frac{k - \rho h}{s}\right)
            - \log\Phi_2(h, k; \rho)\right)

    and symmetrically for :math:`k` (see :func:`log_dndtr2`); the ratio is
    formed in log space, so two underflowed numbers are never divided.

    Infinite arguments give the limits: ``h = +inf`` gives ``d_h = 0`` and
    ``d_k = phi(k)/Phi(k)``; ``h = -inf`` gives ``d_h = +inf`` and ``d_k``
    equal to the limit ``h -> -inf`` at fixed finite ``k``: ``0`` if
    ``corr > 0``, ``phi(k)/Phi(k)`` if ``corr = 0``, ``+inf`` if
    ``corr < 0`` (``0`` if ``k = +inf``, ``+inf`` if ``k = -inf``).
    Symmetrically in ``k``.

    Numerics: the relative error is the absolute error of
    :func:`log_ndtr2` (<= 4e-14 for ``|corr| <= 1/2``, <= 6e-10 for
    ``|corr| = 0.9``) plus the rounding of the log-space difference,
    ~1e-16 (h^2 + k^2) (2e-13 at ``|h| = |k| = 40``).  The tests check it
    against central finite differences of :func:`log_ndtr2` (step 1e-5;
    observed agreement <= 1e-7 relative, enforced rtol 1e-6) in the bulk and
    down to ``h, k = -40``, for ``corr`` in {0, ±1/3, ±1/2, ±0.9}.  For
    ``|h|`` or ``|k|`` beyond ~1e8 the derivative is not resolved; the
    exponent is capped at 700 there so that nothing overflows.
    """
    h, k, corr = _prepare(h, k, corr)
    lh, lk = _log_dndtr2_one(h, k, corr), _log_dndtr2_one(k, h, corr)
    out_h = np.empty(h.shape)
    out_k = np.empty(h.shape)
    fin = np.isfinite(h) & np.isfinite(k)
    if np.any(fin):
        l2 = np.asarray(log_ndtr2(h[fin], k[fin], corr[fin]))
        # The true exponent is below ~240 for |h|, |k| <= 1e100; the cap only
        # stops rounding noise (~1e-16 (h^2 + k^2)) from overflowing exp when
        # |h|, |k| > 1e8, where the derivative is not resolved anyway.
        out_h[fin] = np.exp(np.minimum(lh[fin] - l2, _MAX_LOG_DLOG))
        out_k[fin] = np.exp(np.minimum(lk[fin] - l2, _MAX_LOG_DLOG))
    if not np.all(fin):
        nf = ~fin
        out_h[nf] = _dlog_limit(h[nf], k[nf], corr[nf])
        out_k[nf] = _dlog_limit(k[nf], h[nf], corr[nf])
    return _scalarize(out_h), _scalarize(out_k)


def hermite_rule(n):
    r"""Gauss-Hermite rule for expectations over a standard normal.

    Parameters
    ----------
    n : int
        Number of nodes, ``n >= 1``.

    Returns
    -------
    x, w : ndarray, shape (n,)
        Nodes (increasing) and positive weights with ``sum(w) = 1``, such that
        ``sum(w * f(x)) ~ E f(Z)``, ``Z ~ N(0, 1)``.  Fresh (writable) arrays.

    Notes
    -----
    Probabilists' Hermite rule (``scipy.special.roots_hermitenorm``, weight
    :math:`e^{-x^2/2}`) with weights divided by :math:`\sqrt{2\pi}`:

    .. math:: E f(Z) \approx \sum_{i=1}^n w_i f(x_i),

    exact for polynomials of degree :math:`\le 2n - 1`.

    Numerics: the tests check ``E Z^{2j}`` = (2j-1)!! to relative 1e-13
    for ``2j <= 2n - 1`` and ``sum(w) = 1`` to 1e-14.
    """
    x, w = _hermitenorm_roots(_check_n(n))
    return x.copy(), w.copy()


def legendre_rule(n, lo, hi):
    r"""Gauss-Legendre rule on the interval(s) ``[lo, hi]``.

    Parameters
    ----------
    n : int
        Number of nodes, ``n >= 1``.
    lo, hi : array_like
        Interval end points; they broadcast against each other to a shape
        ``S`` (``()`` for scalars).  ``lo > hi`` gives negative weights
        (oriented integral).

    Returns
    -------
    x, w : ndarray, shape ``S + (n,)``
        Nodes and weights, with the node axis last, such that
        ``sum(w * f(x), axis=-1) ~ integral of f over [lo, hi]``.

    Notes
    -----
    With the Legendre nodes :math:`t_i` and weights :math:`\omega_i` on
    :math:`[-1, 1]` (``scipy._special().roots_legendre``):

    .. math::
        x_i = \frac{lo + hi}{2} + \frac{hi - lo}{2}\, t_i, \qquad
        w_i = \frac{hi - lo}{2}\, \omega_i,

    exact for polynomials of degree :math:`\le 2n - 1`.

    Numerics: the tests check polynomial integrals on several intervals at
    once to relative 1e-13.
    """
    t, om = _legendre_roots(_check_n(n))
    lo = np.asarray(lo, dtype=float)[..., None]
    hi = np.asarray(hi, dtype=float)[..., None]
    half = 0.5 * (hi - lo)
    x = 0.5 * (lo + hi) + half * t
    w = half * om
    x, w = np.broadcast_arrays(x, w)
    return x.copy(), w.copy()
