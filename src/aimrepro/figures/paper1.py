"""Layout of the two figures of paper 1 (``docs/paper1.md`` §7).

The functions here only draw: they receive curves already computed (SE
tables read from the results) and return a :class:`~matplotlib.figure.Figure`
in the shared style of :mod:`aimrepro.figures.style`.  The workflow scripts read
the tables, call these functions and save the figure with its provenance.

Simulation markers (AMP, GD) are optional :class:`MarkerSeries` arguments,
so later results can be overlaid without changing the theory part.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D

from aimrepro.figures.style import (ERRORBAR_WIDTH, LIMIT_COLOUR, LINE_WIDTH, MARKER_SIZE,
                                    annotate_unconverged, figure_style, new_figure, plot_theory,
                                    rho_colours)

__all__ = [
    "AMP_LABELS",
    "AMP_MARKERS",
    "AMP_T_MARKERS",
    "CHANNEL_LABELS",
    "CHANNEL_LINESTYLES",
    "GD_AVERAGED_COLOURS",
    "GD_SINGLE_COLOURS",
    "MarkerSeries",
    "SECurve",
    "amp_marker_series",
    "diverged_students",
    "draw_figure1",
    "draw_figure2",
    "gd_key_handles",
    "gd_marker_series",
    "se_curve_from_table",
    "GDTrend",
    "published_gout_note",
    "unconverged_runs",
]

#: Line style per output channel.  In Figure 1 both hardmax channels share a
#: colour per rho; the corrected channel is dashed.
CHANNEL_LINESTYLES = {"hardmax_paper": "-", "hardmax": "--", "softmax": "-"}
CHANNEL_LABELS = {
    "hardmax_paper": "published formula (B1)",
    "hardmax": "corrected derivative",
    "softmax": "softmax",
}
#: AMP marker per channel in Figure 1 (published style: the paper's dots) and per T in Figure 2.
AMP_MARKERS = {"hardmax_paper": "o", "hardmax": "s", "softmax": "o"}
AMP_LABELS = {"hardmax_paper": "AMP, published $g_{out}$ (B1)", "hardmax": "AMP, corrected $g_{out}$"}
AMP_T_MARKERS = {2: "o", 3: "s", 4: "^", 5: "v", 6: "D"}
#: Figure 2 right, GD markers per T (docs/paper1.md §7): '+' single GD, 'x' GD averaged over initialisations.
GD_SINGLE_COLOURS = {2: "#577590", 3: "#4d908e", 4: "#43aa8b", 5: "#d291ff", 6: "#1e90ff"}
GD_AVERAGED_COLOURS = {2: "#f94144", 3: "#f3722c", 4: "#f8961e", 5: "#f9c74f", 6: "#90be6d"}
GD_SINGLE_MARKER, GD_AVERAGED_MARKER = "+", "x"
_THRESHOLD_COLOUR = "0.55"
_ERROR_LABEL = "Estimation error"


@dataclass(frozen=True)
class SECurve:
    """One state-evolution curve as drawn.

    Attributes
    ----------
    channel : str
        Output channel name (``softmax``, ``hardmax``, ``hardmax_paper``).
    rho : float
        Width ratio; ``0.0`` is the ρ → 0 limit, ``inf`` the ρ → ∞ limit.
    x : (n,) ndarray
        Abscissa in the panel's variable.
    mmse : (n,) ndarray
        Estimation error.
    converged : (n,) bool ndarray
        Per-point convergence of the solver.
    """

    channel: str
    rho: float
    x: np.ndarray
    mmse: np.ndarray
    converged: np.ndarray

    @property
    def is_limit(self) -> bool:
        """ρ → 0 or ρ → ∞: drawn in black."""
        return self.rho == 0 or math.isinf(self.rho)


@dataclass(frozen=True)
class MarkerSeries:
    """Simulation points with error bars (e.g. AMP or GD over seeds).

    ``filled=False`` draws hollow markers: the mean of runs that did not
    converge, shown apart from the converged mean (never averaged into it).
    """

    x: np.ndarray
    y: np.ndarray
    yerr: np.ndarray | None
    label: str | None
    colour: str | None
    marker: str = "o"
    filled: bool = True
    #: With ``colour=None`` the figure colours the points as the curves of this ρ.
    rho: float | None = None


def amp_marker_series(table: Mapping[str, np.ndarray], *, x_scale: float = 1.0, colour: str | None = None,
                      rho: float | None = None, marker: str = "o",
                      label: str | None = None) -> list[MarkerSeries]:
    """Markers of one AMP summary table (``aimrepro.paper1.amp.summary_table``).

    Filled: mean ± std over the usable runs at each α (converged or stationary,
    ``amp.USABLE_STATUSES``).  Hollow, no error
    bar: the mean final error of the runs that stopped at the iteration cap,
    where there are any.  Diverged runs have no error to draw; they are
    counted by :func:`unconverged_runs`.  ``x_scale`` multiplies α (e.g.
    T² + T − 2 for the collapse axis); ``colour`` or ``rho`` as in
    :class:`MarkerSeries`.
    """
    x = np.asarray(table["alpha"], float) * x_scale
    mean = np.asarray(table["error_mean"], float)
    stalled = np.asarray(table["unconverged_mean"], float)
    ok = np.isfinite(mean)
    series = [MarkerSeries(x[ok], mean[ok], np.asarray(table["error_std"], float)[ok], label, colour, marker,
                           rho=rho)]
    bad = np.isfinite(stalled)
    if bad.any():
        series.append(MarkerSeries(x[bad], stalled[bad], None, None, colour, marker, filled=False, rho=rho))
    return series


def gd_marker_series(table: Mapping[str, np.ndarray], T: int) -> list[MarkerSeries]:
    """Markers of one GD summary table (``aimrepro.paper1.gd.summary_table``) against α (T² + T − 2).

    '+' single GD: mean ± std over every finished student; 'x' averaged GD:
    mean ± std over the draws in which no student diverged, in the colours of
    ``docs/paper1.md`` §7 (other T: grey).  Draws in which some student diverged
    average fewer students: their mean is a hollow circle in the averaged
    colour, apart from the 'x' (never mixed in); the diverged students are
    counted by :func:`diverged_students`.
    """
    x = np.asarray(table["alphaT"], float)
    series = []
    for kind, colours, marker in (("single", GD_SINGLE_COLOURS, GD_SINGLE_MARKER),
                                  ("averaged", GD_AVERAGED_COLOURS, GD_AVERAGED_MARKER)):
        mean = np.asarray(table[f"{kind}_mean"], float)
        ok = np.isfinite(mean)
        series.append(MarkerSeries(x[ok], mean[ok], np.asarray(table[f"{kind}_std"], float)[ok], None,
                                   colours.get(T, "0.5"), marker))
    unclean = np.asarray(table["averaged_unclean_mean"], float)
    bad = np.isfinite(unclean)
    if bad.any():
        series.append(MarkerSeries(x[bad], unclean[bad], None, None, GD_AVERAGED_COLOURS.get(T, "0.5"), "o",
                                   filled=False))
    return series


def diverged_students(table: Mapping[str, np.ndarray]) -> int:
    """Students of a GD summary table that diverged (left out of every mean)."""
    return int(np.sum(np.asarray(table["n_diverged"])))


def gd_key_handles(Ts: Sequence[int]) -> tuple[list, list[str]]:
    """A small key for Figure 2 right: per T one ('+', 'x') pair in its colours (the paper has no legend)."""
    handles, labels = [], []
    for T in Ts:
        handles.append((Line2D([], [], color=GD_SINGLE_COLOURS.get(T, "0.5"), marker=GD_SINGLE_MARKER,
                               linestyle="none", markersize=MARKER_SIZE + 2),
                        Line2D([], [], color=GD_AVERAGED_COLOURS.get(T, "0.5"), marker=GD_AVERAGED_MARKER,
                               linestyle="none", markersize=MARKER_SIZE + 2)))
        labels.append(f"GD, T = {T}")
    return handles, labels


def published_gout_note(n_diverged: int, n_runs: int) -> str:
    """Figure 1's grey note on AMP with the published hardmax g_out, whose runs diverge (erratum B1)."""
    return (f"{n_diverged} of {n_runs} AMP runs with the published g_out diverged, as erratum B1 "
            "predicts (docs/paper1.md §9): no marker")


def unconverged_runs(table: Mapping[str, np.ndarray]) -> int:
    """Runs of a summary table that are not usable: neither converged nor stationary (cap or divergence)."""
    stationary = np.asarray(table["n_stationary"]) if "n_stationary" in table else 0
    return int(np.sum(np.asarray(table["n_runs"]) - np.asarray(table["n_converged"]) - stationary))


def se_curve_from_table(columns: Mapping[str, np.ndarray], *, channel: str, rho: float,
                        x_column: str) -> SECurve:
    """Build an :class:`SECurve` from the columns of an SE result table.

    Parameters
    ----------
    columns : mapping
        As returned by :func:`aimrepro.records.tables.read_table` for a table of
        rule ``se_curve``: the axis column, ``alpha``, ``mmse``, ``converged``...
    channel, rho
        What the table is (from the figure's plan).
    x_column : str
        Which column is the panel's abscissa (``alpha``, ``alphabar``, ``alphaT``).
    """
    missing = {x_column, "mmse", "converged"} - set(columns)
    if missing:
        raise ValueError(f"SE table lacks columns {sorted(missing)}; has {list(columns)}")
    return SECurve(channel=channel, rho=float(rho), x=np.asarray(columns[x_column], float),
                   mmse=np.asarray(columns["mmse"], float),
                   converged=np.asarray(columns["converged"], bool))


def _rho_label(rho: float) -> str:
    if rho == 0:
        return r"$\rho \to 0$"
    if math.isinf(rho):
        return r"$\rho = \infty$"
    return rf"$\rho = {rho:g}$"


def _draw_curves(ax: Axes, curves: Sequence[SECurve], colours: Mapping[float, str]) -> int:
    n_unconverged = 0
    for curve in curves:
        colour = LIMIT_COLOUR if curve.is_limit else colours[curve.rho]
        corrected = curve.channel == "hardmax"
        n_unconverged += plot_theory(
            ax, curve.x, curve.mmse, curve.converged, colour=colour,
            linestyle=CHANNEL_LINESTYLES.get(curve.channel, "-"),
            # The dashed corrected curves are drawn a bit thinner so that the
            # solid published ones stay visible where both coincide.
            linewidth=0.9 * LINE_WIDTH if corrected else LINE_WIDTH,
        )
    return n_unconverged


def _draw_markers(ax: Axes, series: Sequence[MarkerSeries], colours: Mapping[float, str] | None = None) -> None:
    for points in series:
        style = ({"markersize": MARKER_SIZE} if points.filled else
                 {"markersize": 1.6 * MARKER_SIZE, "markerfacecolor": "none", "markeredgewidth": 0.6})
        colour = points.colour
        if colour is None:
            if colours is None or points.rho not in colours:
                raise ValueError(f"marker series for rho={points.rho} has no colour and no curve of that rho")
            colour = colours[points.rho]
        ax.errorbar(points.x, points.y, yerr=points.yerr, color=colour,
                    marker=points.marker, linestyle="none",
                    elinewidth=ERRORBAR_WIDTH, label=points.label, **style)


def draw_figure1(left: Sequence[SECurve], right: Sequence[SECurve],
                 thresholds: Mapping[str, float] | None = None,
                 *, left_markers: Sequence[MarkerSeries] = (),
                 marker_legend: Mapping[str, str] | None = None,
                 n_unconverged_runs: int = 0, explained_runs: Sequence[str] = ()) -> tuple[Figure, int]:
    """Paper 1, Figure 1: hardmax T = 2.

    Parameters
    ----------
    left : sequence of SECurve
        Error vs α = n/d² (log-log, α ∈ [0.03, 10], error ∈ [1e-3, 1.1]: below the paper's 0.03,
        so that the corrected curves show); markers outside it are triangles on its edge.
    right : sequence of SECurve
        Error vs ᾱ = α/ρ (log x ∈ [0.1, 20]), including ρ → 0 curves (black).
    thresholds : mapping of channel name to float, optional
        Weak-recovery thresholds ᾱ_c of the ρ → 0 limit, drawn as thin grey
        vertical lines in the channel's line style, each with its legend entry.
    left_markers : sequence of MarkerSeries
        Simulation points for the left panel (AMP), coloured per ρ.
    marker_legend : mapping of legend label to marker symbol, optional
        One grey legend entry per kind of marker (e.g. AMP per channel).
    n_unconverged_runs : int
        Simulation runs that did not converge, written on the figure (in red).
    explained_runs : sequence of str
        Notes on runs that ended as the theory predicts (e.g. the published
        g_out's divergence, erratum B1), written in grey
        (:func:`aimrepro.figures.style.annotate_unconverged`).

    Returns
    -------
    (Figure, int)
        The figure and its number of unconverged SE points (already
        annotated on the figure).
    """
    thresholds = dict(thresholds or {})
    with figure_style():
        fig, (ax_left, ax_right) = new_figure()
        colours = rho_colours(c.rho for c in (*left, *right) if not c.is_limit)
        n_unconverged = _draw_curves(ax_left, left, colours)
        n_unconverged += _draw_curves(ax_right, right, colours)
        _draw_markers(ax_left, left_markers, colours)
        for channel, value in thresholds.items():
            ax_right.axvline(value, color=_THRESHOLD_COLOUR, linewidth=0.6,
                             linestyle=CHANNEL_LINESTYLES.get(channel, "-"), zorder=0)

        ax_left.set(xscale="log", yscale="log", xlim=_FIGURE1_LEFT_XLIM, ylim=_FIGURE1_LEFT_YLIM,
                    xlabel=r"$\alpha = n/d^2$", ylabel=_ERROR_LABEL)
        n_off_scale = _mark_off_scale(ax_left, left_markers, _FIGURE1_LEFT_YLIM, _FIGURE1_LEFT_XLIM,
                                      colours=colours)
        ax_right.set(xscale="log", xlim=(0.1, 20), ylim=(0, 1.05),
                     xlabel=r"$\bar\alpha = \alpha/\rho = n/(dr)$", ylabel=_ERROR_LABEL)

        handles = [Line2D([], [], color=colour, label=_rho_label(rho))
                   for rho, colour in colours.items()]
        if any(c.rho == 0 for c in right):
            handles.append(Line2D([], [], color=LIMIT_COLOUR, label=_rho_label(0.0)))
        for channel in dict.fromkeys(c.channel for c in (*left, *right)):
            handles.append(Line2D([], [], color="0.3", label=CHANNEL_LABELS.get(channel, channel),
                                  linestyle=CHANNEL_LINESTYLES.get(channel, "-")))
        for channel, value in thresholds.items():
            handles.append(Line2D([], [], color=_THRESHOLD_COLOUR, linewidth=0.8,
                                  linestyle=CHANNEL_LINESTYLES.get(channel, "-"),
                                  label=rf"$\bar\alpha_c = {value:.3f}$, {CHANNEL_LABELS.get(channel, channel)}"))
        for label, marker in (marker_legend or {}).items():
            handles.append(Line2D([], [], color="0.3", marker=marker, markersize=MARKER_SIZE + 1,
                                  linestyle="none", label=label))
        ax_right.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5),
                        frameon=False, fontsize=6.5, handlelength=2.2)
        annotate_unconverged(fig, n_unconverged, n_unconverged_runs, extra=(
            [f"{n_off_scale} AMP point(s) outside the left panel: triangles at its edge"] if n_off_scale else []),
            explained=explained_runs)
    return fig, n_unconverged


#: Axes of Figure 1 left: the paper's α range, the error axis extended down to 1e-3 so
#: that the corrected curves and their AMP markers, far below the published ones, show.
_FIGURE1_LEFT_XLIM, _FIGURE1_LEFT_YLIM = (0.03, 10), (1e-3, 1.1)

#: Axes of Figure 2 right (docs/paper1.md §7).
_FIGURE2_RIGHT_XLIM, _FIGURE2_RIGHT_YLIM = (0.01, 1.0), (0.0, 2.1)


def _mark_off_scale(ax: Axes, series: Sequence[MarkerSeries], ylim: tuple[float, float],
                    xlim: tuple[float, float], *, colours: Mapping[float, str] | None = None) -> int:
    """Points above or below the panel (inside its x-range) as hollow triangles on its edge; returns their number.

    A simulation mean beyond the axis range (e.g. GD on very few sequences,
    an AMP error below a log axis) would otherwise silently fall off the
    figure: up-triangles on the top edge, down-triangles on the bottom one.
    """
    n_off = 0
    for points in series:
        x, y = np.asarray(points.x, float), np.asarray(points.y, float)
        inside = (x >= xlim[0]) & (x <= xlim[1])
        colour = points.colour or (colours or {}).get(points.rho, "0.3")
        for off, edge, marker in ((y > ylim[1]) & inside, ylim[1], "^"), ((y < ylim[0]) & inside, ylim[0], "v"):
            if off.any():
                n_off += int(off.sum())
                ax.plot(x[off], np.full(int(off.sum()), edge), linestyle="none", marker=marker,
                        markersize=MARKER_SIZE + 2, markerfacecolor="none", markeredgewidth=0.8,
                        color=colour, clip_on=False, zorder=6)
    return n_off


@dataclass(frozen=True)
class GDTrend:
    """The claims' GD trend point on Figure 2 right: the mean of K students at one α_T over several d.

    ``excess``/``sem`` per d are the mean of K students minus (1 + 1/K) SE
    (:func:`aimrepro.paper1.gd.averaged_trend_point`: with GAMP-RIE on the
    same datasets as control variate where the scale runs it); ``se`` is the
    SE error at the point.
    """

    T: int
    alphaT: float
    K: int
    se: float
    d: tuple[int, ...]
    excess: tuple[float, ...]
    sem: tuple[float, ...]

    @property
    def target(self) -> float:
        """(1 + 1/K) SE: where the mean of K posterior samples would sit."""
        return (1.0 + 1.0 / self.K) * self.se


def _draw_gd_trend(ax: Axes, trend: GDTrend) -> None:
    """The trend's largest d on the panel (a bold x), and the excess against 1/d in an inset."""
    colour = GD_AVERAGED_COLOURS.get(trend.T, "0.5")
    last = int(np.argmax(trend.d))
    ax.errorbar([trend.alphaT], [trend.target + trend.excess[last]], yerr=[trend.sem[last]],
                color=colour, marker=GD_AVERAGED_MARKER, markersize=MARKER_SIZE + 4, markeredgewidth=1.6,
                linestyle="none", elinewidth=ERRORBAR_WIDTH, capsize=1.5, zorder=6,
                label=f"GD, T = {trend.T}: mean of K = {trend.K}, d = {trend.d[last]} (trend)")
    inset = ax.inset_axes([0.1, 0.1, 0.36, 0.3])
    x = 1.0 / np.asarray(trend.d, float)
    inset.errorbar(x, trend.excess, yerr=trend.sem, color=colour, marker=GD_AVERAGED_MARKER,
                   markersize=MARKER_SIZE, linestyle="none", elinewidth=ERRORBAR_WIDTH, capsize=1.5)
    inset.axhline(0.0, color=LIMIT_COLOUR, linewidth=0.6, linestyle="--")
    inset.set_xlim(0.0, 1.15 * float(x.max()))
    inset.set_xlabel(r"$1/d$", fontsize=5, labelpad=1)
    inset.set_title(rf"mean of K $-$ (1+1/K) SE, $\bar\alpha_T$ = {trend.alphaT:.3g}", fontsize=5, pad=2)
    inset.tick_params(labelsize=4.5, length=2, pad=1)


def draw_figure2(left: Sequence[SECurve], right: Sequence[SECurve], *,
                 left_markers: Sequence[MarkerSeries] = (),
                 right_markers: Sequence[MarkerSeries] = (),
                 n_unconverged_runs: int = 0,
                 gd_Ts: Sequence[int] = (),
                 gd_note: str | None = None,
                 n_diverged_students: int = 0,
                 gd_trend: GDTrend | None = None) -> tuple[Figure, int]:
    """Paper 1, Figure 2: softmax, β = 1.

    Parameters
    ----------
    left : sequence of SECurve
        Error vs α (linear, α ∈ [0, 0.28], error ∈ [0, 1.1]); one curve per ρ
        ending at α_PR(ρ, T), and the ρ = ∞ line (dashed black).
    right : sequence of SECurve
        Error vs ᾱ_T = α (T² + T − 2) (linear, [0.01, 1] × [0, 2.1]), black.
    left_markers, right_markers : sequence of MarkerSeries
        Simulation points (AMP, GD); labelled ones get a legend entry on the right panel.
    n_unconverged_runs : int
        Simulation runs that did not converge, written on the figure.
    gd_Ts : sequence of int
        T values with GD markers among ``right_markers``: a small key ('+'
        single, 'x' averaged, per T) is added to the right panel.
    gd_note : str, optional
        Text under that key (e.g. '+ single, x mean of K students, d = ...').
    n_diverged_students : int
        GD students that diverged, written on the figure.
    gd_trend : GDTrend, optional
        The claims' GD trend point: its largest d as a bold marker on the right
        panel (at the size where the verdict is read, not the figure grid's
        small d), and its excess against 1/d in an inset, with the posterior
        sampler's value 0 dashed.

    Returns
    -------
    (Figure, int)
        The figure and its number of unconverged SE points.
    """
    with figure_style():
        fig, (ax_left, ax_right) = new_figure()
        colours = rho_colours(c.rho for c in left if not c.is_limit)
        n_unconverged = 0
        for curve in left:
            colour = LIMIT_COLOUR if curve.is_limit else colours[curve.rho]
            n_unconverged += plot_theory(
                ax_left, curve.x, curve.mmse, curve.converged, colour=colour,
                linestyle="--" if math.isinf(curve.rho) else "-", label=_rho_label(curve.rho))
        for curve in right:
            n_unconverged += plot_theory(ax_right, curve.x, curve.mmse, curve.converged,
                                         colour=LIMIT_COLOUR)
        _draw_markers(ax_left, left_markers, colours)
        _draw_markers(ax_right, right_markers)
        if gd_trend is not None and gd_trend.d:
            _draw_gd_trend(ax_right, gd_trend)
        n_off_scale = _mark_off_scale(ax_right, right_markers, _FIGURE2_RIGHT_YLIM, _FIGURE2_RIGHT_XLIM)

        ax_left.set(xlim=(0, 0.28), ylim=(0, 1.1), xlabel=r"$\alpha = n/d^2$",
                    ylabel=_ERROR_LABEL)
        ax_left.legend(loc="upper right", frameon=False, fontsize=8)
        ax_right.set(xlim=_FIGURE2_RIGHT_XLIM, ylim=_FIGURE2_RIGHT_YLIM,
                     xlabel=r"$\bar\alpha_T = \alpha\,(T^2+T-2)$", ylabel=_ERROR_LABEL)
        handles, labels = ax_right.get_legend_handles_labels()
        if gd_Ts:
            gd_handles, gd_labels = gd_key_handles(gd_Ts)
            handles, labels = handles + gd_handles, labels + gd_labels
        if handles:
            ax_right.legend(handles, labels, loc="upper right", frameon=False, fontsize=5.5,
                            ncol=2 if len(handles) > 5 else 1, handler_map={tuple: HandlerTuple(ndivide=None)},
                            title=gd_note, title_fontsize=5.5, columnspacing=1.0, handletextpad=0.4)
        extra = [f"{n_diverged_students} diverged GD student(s): left out, their draws' means hollow"] \
            if n_diverged_students else []
        if n_off_scale:
            extra.append(f"{n_off_scale} point(s) above the panel: triangles at its top edge")
        annotate_unconverged(fig, n_unconverged, n_unconverged_runs, extra=extra)
    return fig, n_unconverged
