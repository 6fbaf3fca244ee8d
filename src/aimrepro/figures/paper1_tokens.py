"""Supplementary Figure S1 of paper 1: hardmax attention with T = 2, 3, 4 tokens (docs/paper1.md §3.6).

Beyond the paper, which solves hardmax for T = 2 only.  The curves come from
the tabulated SE of :mod:`aimrepro.paper1.hardmax_tokens` (rule
``tokens_se_curve``), each point with the standard error that the table's
Monte-Carlo noise gives the MMSE; the exact corrected T = 2 channel (rule
``se_curve``) is the check.  Drawing only: the workflow script reads the
tables and saves the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from aimrepro.figures.paper1 import SECurve
from aimrepro.figures.style import (LINE_WIDTH, MARKER_SIZE, annotate_unconverged, figure_style,
                                    new_figure, plot_theory, rho_colours)

__all__ = ["BAND_SIGMAS", "MAX_MARKERS", "T_LINESTYLES", "TokensCurve", "draw_figure_s1", "t2_deviation",
           "tokens_curve_from_table"]

#: Line style per T; T = 2 is the exact channel (solid) with the tabulated points as dots on it.
T_LINESTYLES = {2: "-", 3: "--", 4: ":"}
#: Half-width of the error bands, in standard errors of the MMSE.
BAND_SIGMAS = 2.0
#: At most this many markers per curve (the paper preset has 128 points per curve).
MAX_MARKERS = 24
_EXTRAPOLATED_STYLE = {"linestyle": "none", "marker": "o", "markersize": 1.8 * MARKER_SIZE,
                       "markerfacecolor": "none", "markeredgewidth": 0.6, "zorder": 4}


@dataclass(frozen=True)
class TokensCurve:
    """One tabulated SE curve: MMSE ± s.e. along α at one (T, ρ); ``extrapolated`` below the table's x_min."""

    T: int
    rho: float
    alpha: np.ndarray
    mmse: np.ndarray
    mmse_stderr: np.ndarray
    extrapolated: np.ndarray
    converged: np.ndarray


def tokens_curve_from_table(columns: Mapping[str, np.ndarray], *, T: int, rho: float) -> TokensCurve:
    """A :class:`TokensCurve` from a table of rule ``tokens_se_curve`` (``hardmax_tokens.curve_columns``)."""
    needed = {"alpha", "mmse", "mmse_stderr", "extrapolated", "converged"}
    missing = needed - set(columns)
    if missing:
        raise ValueError(f"tokens SE table lacks columns {sorted(missing)}; has {list(columns)}")
    return TokensCurve(int(T), float(rho), *(np.asarray(columns[name], float) for name in
                                             ("alpha", "mmse", "mmse_stderr")),
                       np.asarray(columns["extrapolated"], bool), np.asarray(columns["converged"], bool))


def t2_deviation(curve: TokensCurve, exact: SECurve) -> np.ndarray:
    """(MMSE through the T = 2 table − exact MMSE)/s.e. at each α (the two grids must agree)."""
    if curve.T != 2 or curve.rho != exact.rho:
        raise ValueError(f"need the T = 2 table curve of rho = {exact.rho}, got T = {curve.T}, rho = {curve.rho}")
    if curve.alpha.shape != exact.x.shape or not np.allclose(curve.alpha, exact.x, rtol=1e-9):
        raise ValueError("the tabulated and exact T = 2 curves must share their alpha grid")
    return (curve.mmse - exact.mmse) / curve.mmse_stderr


def _marker_stride(n_points: int) -> int:
    """Every k-th point gets a marker, so that a curve shows at most :data:`MAX_MARKERS`."""
    return max(1, -(-n_points // MAX_MARKERS))


def draw_figure_s1(curves: Sequence[TokensCurve], exact: Sequence[SECurve]) -> tuple[Figure, int]:
    """Left: MMSE against α for every T and ρ, bands ±:data:`BAND_SIGMAS` s.e., extrapolated points hollow.

    Right: the check at T = 2, (tabulated − exact)/s.e. against α per ρ, with
    the ±2 band.  Returns the figure and its number of unconverged SE points.
    """
    curves, exact = list(curves), list(exact)
    if not curves:
        raise ValueError("Figure S1 needs at least one tabulated curve")
    exact_of = {c.rho: c for c in exact}
    with figure_style():
        fig, (ax, ax_check) = new_figure()
        colours = rho_colours([c.rho for c in curves] + list(exact_of))
        n_unconverged = 0
        for rho, curve in exact_of.items():
            n_unconverged += plot_theory(ax, curve.x, curve.mmse, curve.converged, colour=colours[rho],
                                         linestyle=T_LINESTYLES[2])
        for curve in curves:
            colour = colours[curve.rho]
            every = _marker_stride(curve.alpha.size)
            if curve.T == 2 and curve.rho in exact_of:
                ax.plot(curve.alpha[::every], curve.mmse[::every], linestyle="none", marker="o",
                        markersize=MARKER_SIZE, color=colour, zorder=3)
            else:
                n_unconverged += plot_theory(ax, curve.alpha, curve.mmse, curve.converged, colour=colour,
                                             linestyle=T_LINESTYLES.get(curve.T, "-."),
                                             linewidth=0.9 * LINE_WIDTH)
            spread = BAND_SIGMAS * curve.mmse_stderr
            ax.fill_between(curve.alpha, curve.mmse - spread, curve.mmse + spread, color=colour,
                            alpha=0.3, linewidth=0)
            out = np.flatnonzero(curve.extrapolated)[::every]
            if out.size:
                ax.plot(curve.alpha[out], curve.mmse[out], color=colour, **_EXTRAPOLATED_STYLE)
        positive = np.concatenate([c.mmse[c.mmse > 0] for c in curves])
        ax.set(xscale="log", yscale="log", xlim=(min(c.alpha.min() for c in curves), max(c.alpha.max() for c in curves)),
               ylim=(0.7 * positive.min(), 1.1), xlabel=r"$\alpha = n/d^2$", ylabel="Estimation error")

        for curve in curves:
            if curve.T == 2 and curve.rho in exact_of:
                ax_check.plot(curve.alpha, t2_deviation(curve, exact_of[curve.rho]), marker="o",
                              markersize=MARKER_SIZE, markevery=_marker_stride(curve.alpha.size),
                              linewidth=0.6, color=colours[curve.rho])
        ax_check.axhspan(-2.0, 2.0, color="0.9", zorder=0)
        ax_check.axhline(0.0, color="0.5", linewidth=0.6)
        ax_check.set(xscale="log", ylim=(-4.5, 4.5), xlabel=r"$\alpha = n/d^2$",
                     ylabel=r"$T = 2$: (table $-$ exact)/s.e.")

        handles = [Line2D([], [], color=colour, label=rf"$\rho = {rho:g}$") for rho, colour in colours.items()]
        for T in sorted({c.T for c in curves}):
            if T == 2:
                handles.append(Line2D([], [], color="0.3", linestyle=T_LINESTYLES[2], marker="o",
                                      markersize=MARKER_SIZE, label="T = 2: exact (line), table (dots)"))
            else:
                handles.append(Line2D([], [], color="0.3", linestyle=T_LINESTYLES.get(T, "-."),
                                      label=f"T = {T}"))
        handles.append(Patch(color="0.3", alpha=0.3, label=rf"$\pm{BAND_SIGMAS:g}$ s.e. (table noise)"))
        if any(c.extrapolated.any() for c in curves):
            handles.append(Line2D([], [], color="0.3", label="fit extrapolated", **_EXTRAPOLATED_STYLE))
        ax_check.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False,
                        fontsize=6.5, handlelength=2.2)
        annotate_unconverged(fig, n_unconverged)
    return fig, n_unconverged
