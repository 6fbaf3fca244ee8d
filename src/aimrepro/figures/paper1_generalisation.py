"""Paper 1, Figure S2 (beyond the paper): the generalisation error (``docs/paper1.md`` §2).

The paper defines the Bayes-optimal generalisation error but never draws it.
The figure shows, through the state evolution
(:mod:`aimrepro.paper1.generalisation`), the Bayes-optimal error (posterior-mean
prediction of y, solid) and the plug-in error of g(ĥ) (dashed), beside
GAMP-RIE's measured errors on fresh test sequences of the same datasets
(filled markers: Bayes prediction with AMP's own variance; hollow: plug-in).
Left: softmax (β = 1) against ᾱ_T = α(T² + T − 2), one colour per T; right:
the corrected hardmax channel, T = 2, against α.

The functions only draw; the workflow script reads the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aimrepro.figures.style import (ERRORBAR_WIDTH, LINE_WIDTH, MARKER_SIZE, annotate_unconverged,
                                    figure_style, new_figure, plot_theory)

__all__ = ["GenCurve", "GenMarkers", "T_COLOURS", "draw_figureS2", "gen_curve_from_table",
           "gen_markers_from_table"]

#: Colour per softmax T (left panel); the hardmax panel is black.
T_COLOURS = {2: "#577590", 3: "#f3722c"}
HARDMAX_COLOUR = "black"
AMP_MARKERS = {2: "o", 3: "s"}


@dataclass(frozen=True)
class GenCurve:
    """One SE generalisation curve: Bayes-optimal and plug-in errors along the panel's abscissa."""

    channel: str
    T: int
    x: np.ndarray
    bayes: np.ndarray
    plugin: np.ndarray
    converged: np.ndarray


@dataclass(frozen=True)
class GenMarkers:
    """GAMP-RIE's held-out errors at one (channel, T, ρ, d): mean ± std over usable runs per α."""

    channel: str
    T: int
    d: int
    x: np.ndarray
    bayes: np.ndarray
    bayes_std: np.ndarray
    plugin: np.ndarray
    plugin_std: np.ndarray


def _x_scale(channel: str, T: int) -> float:
    return float(T * T + T - 2) if channel == "softmax" else 1.0


def gen_curve_from_table(columns: Mapping[str, np.ndarray], *, channel: str, T: int) -> GenCurve:
    """A curve of rule ``se_generalisation`` (columns alpha, gen_bayes, gen_plugin, se_converged)."""
    missing = {"alpha", "gen_bayes", "gen_plugin", "se_converged"} - set(columns)
    if missing:
        raise ValueError(f"generalisation table lacks columns {sorted(missing)}; has {list(columns)}")
    return GenCurve(channel, int(T), np.asarray(columns["alpha"], float) * _x_scale(channel, T),
                    np.asarray(columns["gen_bayes"], float), np.asarray(columns["gen_plugin"], float),
                    np.asarray(columns["se_converged"], bool))


def gen_markers_from_table(table: Mapping[str, np.ndarray], *, channel: str, T: int, d: int) -> GenMarkers:
    """Held-out errors of an AMP summary table (``amp.summary_table``: gen_bayes_*, gen_* = plug-in)."""
    return GenMarkers(channel, int(T), int(d), np.asarray(table["alpha"], float) * _x_scale(channel, T),
                      np.asarray(table["gen_bayes_mean"], float), np.asarray(table["gen_bayes_std"], float),
                      np.asarray(table["gen_mean"], float), np.asarray(table["gen_std"], float))


def _draw_markers(ax, markers: GenMarkers, colour: str) -> int:
    """Filled Bayes-prediction and hollow plug-in markers; returns the number of points drawn."""
    drawn = 0
    for values, spread, filled in ((markers.bayes, markers.bayes_std, True),
                                   (markers.plugin, markers.plugin_std, False)):
        ok = np.isfinite(values)
        if not ok.any():
            continue
        style = {} if filled else {"markerfacecolor": "none", "markeredgewidth": 0.7}
        ax.errorbar(markers.x[ok], values[ok], yerr=spread[ok], color=colour, linestyle="none",
                    marker=AMP_MARKERS.get(markers.T, "o"), markersize=MARKER_SIZE + 0.5,
                    elinewidth=ERRORBAR_WIDTH, **style)
        drawn += int(ok.sum())
    return drawn


def draw_figureS2(curves: Sequence[GenCurve], markers: Sequence[GenMarkers] = ()) -> tuple[Figure, int, int]:
    """Figure S2: softmax generalisation errors (left, per T), corrected hardmax T = 2 (right).

    Returns
    -------
    (Figure, int, int)
        The figure, its unconverged SE points (annotated on it) and the number
        of AMP points drawn.
    """
    with figure_style():
        fig, (ax_soft, ax_hard) = new_figure()
        n_unconverged, n_points = 0, 0
        for curve in curves:
            ax = ax_soft if curve.channel == "softmax" else ax_hard
            colour = T_COLOURS.get(curve.T, "0.4") if curve.channel == "softmax" else HARDMAX_COLOUR
            n_unconverged += plot_theory(ax, curve.x, curve.bayes, curve.converged, colour=colour)
            n_unconverged += plot_theory(ax, curve.x, curve.plugin, curve.converged, colour=colour,
                                         linestyle="--", linewidth=0.9 * LINE_WIDTH)
        for series in markers:
            ax = ax_soft if series.channel == "softmax" else ax_hard
            colour = T_COLOURS.get(series.T, "0.4") if series.channel == "softmax" else HARDMAX_COLOUR
            n_points += _draw_markers(ax, series, colour)

        ax_soft.set(xlim=(0, 1.0), ylim=(0, None), xlabel=r"$\bar\alpha_T = \alpha\,(T^2+T-2)$",
                    ylabel="Generalisation error")
        ax_hard.set(xscale="log", ylim=(0, None), xlabel=r"$\alpha = n/d^2$", ylabel="Generalisation error")
        ax_soft.set_title("softmax, $\\beta = 1$", fontsize=8)
        ax_hard.set_title("hardmax, T = 2 (corrected channel)", fontsize=8)

        d_text = ", ".join(sorted({f"d = {m.d}" for m in markers}))
        for ax, channel in ((ax_soft, "softmax"), (ax_hard, "hardmax")):
            handles = [Line2D([], [], color=T_COLOURS.get(c.T, "0.4"), label=f"T = {c.T}")
                       for c in curves if c.channel == "softmax" and channel == "softmax"]
            handles += [Line2D([], [], color="0.3", label="SE, Bayes-optimal"),
                        Line2D([], [], color="0.3", linestyle="--", label="SE, plug-in g(ĥ)")]
            if any(m.channel == channel for m in markers):
                handles += [Line2D([], [], color="0.3", marker="o", linestyle="none",
                                   markersize=MARKER_SIZE + 1, label="AMP, Bayes prediction"),
                            Line2D([], [], color="0.3", marker="o", linestyle="none", markerfacecolor="none",
                                   markersize=MARKER_SIZE + 1, label="AMP, plug-in")]
            ax.legend(handles=handles, loc="upper right", frameon=False, fontsize=5.5,
                      title=f"held-out, {d_text}" if d_text and any(m.channel == channel for m in markers)
                      else None, title_fontsize=5.5)
        annotate_unconverged(fig, n_unconverged)
    return fig, n_unconverged, n_points
