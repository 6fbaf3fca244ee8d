"""Our figure (beyond paper 1): the state evolution against GAMP-RIE and GD for tokens that are not Gaussian (``docs/paper1.md`` §13).

Left: hardmax, T = 2, error against α; the Gaussian SE (black) and the SE
with each law's diagonal variance (coloured, dashed: our theory), with the
mean GAMP-RIE error per law at the trend point's largest d.  Right: softmax
against ᾱ_T = α(T² + T − 2); one SE for every law (the softmax information
does not depend on the law), GAMP-RIE per law for T = 2 (circles) and T = 3
(squares), and the mean of K GD students per law (crosses) against
(1 + 1/K) SE (grey dashed).  The markers of one point are spread
horizontally (per law, and per T on the right) so that none hides another:
all are measured at the point's α.  Markers: mean ± error of the mean over the
usable runs (converged or stationary; finished for GD); runs that diverged
or stopped at the cap are not drawn, and their count is written on the
figure.  Drawing only: the tables come from the workflow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aimrepro.figures.style import (ERRORBAR_WIDTH, LIMIT_COLOUR, MARKER_SIZE, annotate_unconverged, figure_style,
                                    new_figure, plot_theory)
from aimrepro.model import TokenLaw
from aimrepro.paper1.amp import USABLE_STATUSES

__all__ = ["LAW_COLOURS", "draw_token_laws_figure", "law_colour", "law_label", "marker_point"]

#: One colour per law name (the Gaussian law is the theory's black).
LAW_COLOURS = {"gaussian": LIMIT_COLOUR, "rademacher": "#577590", "sparse": "#43aa8b", "student_t": "#f3722c"}
#: Markers of one point are spread horizontally so that they do not overlap (all are measured at the same
#: x): law k of _LAW_ORDER sits at slot k - 1.5, a slot being a factor _LOG_SLOT on a log axis and
#: _LINEAR_SLOT on the linear one, where the T = 2 and T = 3 groups also sit _T_SHIFT to either side.
_LAW_ORDER = ("gaussian", "rademacher", "sparse", "student_t")
_LOG_SLOT, _LINEAR_SLOT = 1.1, 0.012
_T_SHIFT = {2: -0.03, 3: 0.03}
_T_MARKERS = {2: "o", 3: "s"}


def _spread(x: float, token: str, *, log: bool, shift: float = 0.0) -> float:
    slot = _LAW_ORDER.index(TokenLaw.parse(token).name) - 1.5
    return x * _LOG_SLOT ** slot if log else x + shift + _LINEAR_SLOT * slot


def law_colour(token: str) -> str:
    return LAW_COLOURS[TokenLaw.parse(token).name]


def law_label(token: str) -> str:
    law = TokenLaw.parse(token)
    if law.name == "sparse":
        return f"sparse, p = {law.keep_prob:g}"
    if law.name == "student_t":
        return rf"Student-t, $\nu$ = {law.dof:g}"
    return law.name.capitalize()


def marker_point(table: Mapping, column: str = "error") -> tuple[float, float, int, int]:
    """(mean, error of the mean, usable runs, runs) of a replicate table (AMP status, or GD diverged count)."""
    if "status" in table:
        usable = np.array([str(s) in USABLE_STATUSES for s in table["status"]], dtype=bool)
    else:
        usable = np.array([int(n) == 0 for n in table["n_diverged"]], dtype=bool)
    values = np.asarray(table[column], dtype=float)[usable]
    values = values[np.isfinite(values)]
    n = int(values.size)
    mean = float(values.mean()) if n else np.nan
    sem = float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
    return mean, sem, n, int(usable.size)


def _largest(tables: Mapping[tuple[str, int], Mapping], token: str) -> tuple[int, Mapping] | None:
    sizes = [d for law, d in tables if law == token]
    return (max(sizes), tables[(token, max(sizes))]) if sizes else None


def _markers(ax, x: float, tables, laws, *, marker: str, column: str = "error", label_runs: str,
             dropped: list[str], log: bool = False, shift: float = 0.0) -> None:
    for token in laws:
        found = _largest(tables, token)
        if found is None:
            continue
        d, table = found
        mean, sem, n, total = marker_point(table, column)
        if n:
            ax.errorbar([_spread(x, token, log=log, shift=shift)], [mean], yerr=[0.0 if np.isnan(sem) else sem],
                        linestyle="none", marker=marker, markersize=1.8 * MARKER_SIZE, color=law_colour(token),
                        elinewidth=ERRORBAR_WIDTH, capsize=1.5, zorder=4)
        if n < total:
            dropped.append(f"{law_label(token)}: {total - n} of {total} {label_runs} (d = {d}) not drawn")


def draw_token_laws_figure(*, hardmax_point: Mapping, hardmax_curves: Mapping[str, Mapping[str, np.ndarray]],
                           hardmax_tables: Mapping[tuple[str, int], Mapping],
                           softmax_curve: Mapping[str, np.ndarray], softmax_points: Sequence[Mapping],
                           softmax_tables: Sequence[Mapping[tuple[str, int], Mapping]],
                           gd_point: Mapping | None = None,
                           gd_tables: Mapping[tuple[str, int], Mapping] | None = None) -> tuple[Figure, int]:
    """Draw the figure (module notes); returns it and its number of unconverged SE points.

    Parameters
    ----------
    hardmax_point : ``alpha``, ``rho``, ``laws`` (path tokens) of the hardmax trend point
    hardmax_curves : {law token: ``token_laws.law_se_curve`` columns} (``gaussian`` among them)
    hardmax_tables : {(law, d): ``token_law_runs.amp_replicates`` table}
    softmax_curve : the softmax SE against ``alphaT`` (columns ``alphaT``, ``mmse``, ``converged``)
    softmax_points, softmax_tables : the softmax trend points (``T``, ``alpha``, ``laws``) and their tables
    gd_point, gd_tables : the GD point (``T``, ``alphaT``, ``inits``, ``laws``) and its tables
    """
    if "gaussian" not in hardmax_curves:
        raise ValueError("the hardmax panel needs the Gaussian SE curve (law 'gaussian')")
    with figure_style():
        fig, (ax, ax_soft) = new_figure()
        n_unconverged, dropped = 0, []
        for token, curve in hardmax_curves.items():
            gaussian = TokenLaw.parse(token).is_gaussian
            n_unconverged += plot_theory(ax, curve["alpha"], curve["mmse"], curve["converged"],
                                         colour=law_colour(token), linestyle="-" if gaussian else "--",
                                         linewidth=1.2 if gaussian else 0.9)
        _markers(ax, hardmax_point["alpha"], hardmax_tables, hardmax_point["laws"], marker="o",
                 label_runs="AMP runs", dropped=dropped, log=True)
        alphas = np.concatenate([np.asarray(c["alpha"]) for c in hardmax_curves.values()])
        ax.set(xscale="log", xlim=(alphas.min(), alphas.max()), ylim=(0.0, 1.05), xlabel=r"$\alpha = n/d^2$",
               ylabel="Estimation error", title=rf"hardmax, $T = 2$, $\rho = {hardmax_point['rho']:g}$")

        n_unconverged += plot_theory(ax_soft, softmax_curve["alphaT"], softmax_curve["mmse"],
                                     softmax_curve["converged"], colour=LIMIT_COLOUR)
        for point, tables in zip(softmax_points, softmax_tables):
            alpha_T = point["alpha"] * (point["T"] ** 2 + point["T"] - 2)
            _markers(ax_soft, alpha_T, tables, point["laws"], marker=_T_MARKERS.get(point["T"], "D"),
                     label_runs=f"AMP runs at T = {point['T']}", dropped=dropped, shift=_T_SHIFT.get(point["T"], 0.0))
        if gd_point is not None and gd_tables:
            K = gd_point["inits"]
            x = np.asarray(softmax_curve["alphaT"], dtype=float)
            ax_soft.plot(x, (1 + 1 / K) * np.asarray(softmax_curve["mmse"], dtype=float), color="0.6",
                         linestyle="--", linewidth=0.8)
            _markers(ax_soft, gd_point["alphaT"], gd_tables, gd_point["laws"], marker="x",
                     column="averaged_error", label_runs="GD draws", dropped=dropped)
        ax_soft.set(xlim=(0.0, 1.0), ylim=(0.0, 1.1), xlabel=r"$\bar\alpha_T = \alpha\,(T^2 + T - 2)$",
                    title=r"softmax, $\rho = 0.5$, $\beta = 1$")

        laws = list(dict.fromkeys([*hardmax_point["laws"], *(t for p in softmax_points for t in p["laws"])]))
        handles = [Line2D([], [], color=law_colour(t), marker="o", markersize=MARKER_SIZE, linestyle="none",
                          label=law_label(t)) for t in laws]
        handles += [Line2D([], [], color=LIMIT_COLOUR, label="SE, Gaussian tokens (theory)"),
                    Line2D([], [], color="0.3", linestyle="--", linewidth=0.9,
                           label="SE with the law's diagonal variance (ours)"),
                    Line2D([], [], color="0.3", marker="o", linestyle="none", label="GAMP-RIE, T = 2 (measured)"),
                    Line2D([], [], color="0.3", marker="s", linestyle="none", label="GAMP-RIE, T = 3 (measured)")]
        if gd_point is not None and gd_tables:
            handles += [Line2D([], [], color="0.3", marker="x", linestyle="none",
                               label=f"mean of {gd_point['inits']} GD students, T = {gd_point['T']} (measured)"),
                        Line2D([], [], color="0.6", linestyle="--", linewidth=0.8, label="(1 + 1/K) SE")]
        ax_soft.legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False,
                       fontsize=6, handlelength=2.0)
        annotate_unconverged(fig, n_unconverged, extra=dropped)
    return fig, n_unconverged
