"""Layout of paper 2's Figures 1 and 4 and the supplementary Figure S6 (``docs/paper2.md`` §4, §6).

The functions only draw: they receive trajectories and tables computed by
the pipeline and return a :class:`~matplotlib.figure.Figure` in the shared
style of :mod:`aimrepro.figures.style` (theory as lines, SGD as markers with
error bars over seeds).  A truncation is drawn only while it is an
admissible moment trajectory: a line stops where it blew up (red cross) or
where its q left the PSD cone (hollow red circle), and the marker sits at its
last admissible value, clipped to the panel so that it is always visible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aimrepro.paper2.moment_experiments import (convergence_horizon, error_matrix, signed_overlap,
                                                stack_truncations, truncation_overlap_errors)
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.figures.style import (ERRORBAR_WIDTH, FIGSIZE, LIMIT_COLOUR, LINE_WIDTH, MARKER_SIZE,
                                    figure_style, new_figure)

__all__ = ["draw_figure_s6", "draw_truncation_figure", "order_colours"]

_BLOWUP_STYLE = {"linestyle": "none", "marker": "x", "markersize": 5, "color": "red",
                 "markeredgewidth": 1.1, "zorder": 6}
_PSD_EXIT_STYLE = {"linestyle": "none", "marker": "o", "markersize": 4.5,
                   "markerfacecolor": "none", "markeredgecolor": "red",
                   "markeredgewidth": 1.0, "zorder": 6}
_SGD_COLOUR = "0.25"


def order_colours(orders: Sequence[int]) -> dict[int, str]:
    """One colour per truncation order, light (low M) to dark (high M)."""
    cmap = colormaps["viridis_r"]
    orders = sorted(orders)
    span = max(len(orders) - 1, 1)
    return {m: cmap(0.15 + 0.8 * i / span) for i, m in enumerate(orders)}


def _batch_loss(run: Trajectory) -> np.ndarray:
    return run.column("batch_loss")


def _reference_limits(values: Sequence[np.ndarray], margin: float = 0.15) -> tuple[float, float]:
    finite = np.concatenate([np.asarray(v, float)[np.isfinite(v)] for v in values])
    lo, hi = float(finite.min()), float(finite.max())
    pad = margin * max(hi - lo, 1e-12)
    return lo - pad, hi + pad


def _draw_truncations(ax, times: np.ndarray, stack: np.ndarray, orders: Sequence[int],
                      causes: Sequence[str], colours: Mapping[int, str],
                      ylim: tuple[float, float]) -> None:
    """Mean over replicates of each order, cut at its first inadmissible time and marked there."""
    for j, m in enumerate(orders):
        mean = stack[:, j].mean(axis=0)      # NaN as soon as one replicate is inadmissible
        bad = np.flatnonzero(~np.isfinite(mean))
        end = bad[0] if bad.size else times.size
        ax.plot(times[:end], mean[:end], color=colours[m], lw=LINE_WIDTH * 0.9,
                label=f"$M = {m}$")
        if end < times.size and end > 0:
            y = float(np.clip(mean[end - 1], *ylim))
            style = _BLOWUP_STYLE if causes[j] == "blow-up" else _PSD_EXIT_STYLE
            ax.plot([times[end - 1]], [y], **style)


def _cut_causes(truncations: Sequence[Mapping[int, Trajectory]],
                orders: Sequence[int]) -> tuple[list[str], dict]:
    """Why each order's curve stops first over the replicates: blow-up, PSD exit or none."""
    causes, summary = [], {}
    for m in orders:
        t_blow = min((tr[m].t_blowup for tr in truncations if tr[m].blew_up), default=math.inf)
        t_psd = min((float(tr[m].extra["t_left_psd"][0]) for tr in truncations if len(tr[m])
                     and np.isfinite(tr[m].extra["t_left_psd"][0])), default=math.inf)
        cause = "none" if math.isinf(min(t_blow, t_psd)) else (
            "blow-up" if t_blow <= t_psd else "left the PSD cone")
        causes.append(cause)
        summary[str(m)] = {"cut": cause, "t_blowup": None if math.isinf(t_blow) else t_blow,
                           "t_left_psd": None if math.isinf(t_psd) else t_psd}
    return causes, summary


def draw_truncation_figure(runs: Sequence[Trajectory], references: Sequence[Trajectory],
                           reference_losses: Sequence[np.ndarray],
                           truncations: Sequence[Mapping[int, Trajectory]],
                           orders: Sequence[int], *, reference_label: str, error_floor: float,
                           radius: float | None = None,
                           n_markers: int = 25) -> tuple[Figure, dict]:
    """Figures 1 and 4: SGD against the truncations of order M and the infinite-order reference.

    Parameters
    ----------
    runs : SGD replicates (markers: mean ± standard deviation over them).
    references : one infinite-order trajectory per replicate (matrix flow, or
        the exact Riccati solution), drawn as a black line (their mean).
    reference_losses : Φ along each reference.
    truncations : one {M: Trajectory} per replicate, on the references' grid,
        with ``loss`` and ``t_left_psd`` columns
        (:func:`~aimrepro.paper2.moment_experiments.truncation_table`).
    orders : truncation orders to draw.
    reference_label : legend text of the reference line.
    error_floor : overlap errors below it count as converged when the horizon
        t_c of "larger M helps" is located (grey dotted line, :func:`convergence_horizon`).
    radius : the radius of convergence R of the truncations (Figure 4: mean over
        the replicates of :func:`~aimrepro.paper2.truncation_radius.riccati_radius`),
        drawn as a dash-dotted line; None: not drawn.

    Returns
    -------
    Figure, diagnostics
        Per order where and why its curve stops, and the SGD blow-ups.
    """
    orders = sorted(orders)
    colours = order_colours(orders)
    times = references[0].t_ode
    causes, summary = _cut_causes(truncations, orders)
    _, _, errors = truncation_overlap_errors(truncations, references, orders)
    t_c = convergence_horizon(times[1:], errors[:, 1:], orders, floor=error_floor)
    n_blowups = sum(run.blew_up for run in runs)
    with figure_style():
        fig, (left, right) = new_figure()
        # SGD: mean ± s.d. of the signed overlap, and of the batch loss
        t_sgd, overlap, overlap_sd = _mean_signed(runs, signed_overlap)
        t_loss, loss, loss_sd = _mean_signed(runs, _batch_loss)
        step = max(1, len(t_sgd) // n_markers)
        ref_overlap = np.mean([signed_overlap(r) for r in references], axis=0)
        ref_loss = np.mean(reference_losses, axis=0)
        for ax, (t_s, y_s, sd_s), ref, quantity in (
                (left, (t_sgd, overlap, overlap_sd), ref_overlap, signed_overlap),
                (right, (t_loss[1:], loss[1:], loss_sd[1:]), ref_loss,
                 lambda tr: tr.column("loss"))):
            ylim = _reference_limits([y_s, ref])
            stack = stack_truncations(truncations, orders, times, quantity)
            _draw_truncations(ax, times, stack, orders, causes, colours, ylim)
            ax.plot(times, ref, color=LIMIT_COLOUR, lw=LINE_WIDTH, ls="--", zorder=5,
                    label=reference_label)
            ax.errorbar(t_s[::step], y_s[::step], yerr=sd_s[::step], fmt="o", ms=MARKER_SIZE,
                        lw=ERRORBAR_WIDTH, color=_SGD_COLOUR, zorder=4, label="SGD")
            if t_c is not None:
                ax.axvline(t_c, color="0.55", ls=":", lw=0.9, zorder=0)
            if radius is not None and times[0] < radius < times[-1]:
                ax.axvline(radius, color=LIMIT_COLOUR, ls="-.", lw=0.7, zorder=0)
            ax.set_ylim(*ylim)
            ax.set_xlim(times[0], times[-1])
            ax.set_xlabel(r"time $t$ (ODE units)")
        left.set_ylabel(r"overlap $p_{12}/p_{22}$")
        right.set_ylabel(r"loss: SGD batch, theory $\Phi(q)$")
        handles = [Line2D([], [], color=colours[m], lw=LINE_WIDTH, label=f"$M = {m}$")
                   for m in orders]
        handles += [Line2D([], [], color=LIMIT_COLOUR, lw=LINE_WIDTH, ls="--",
                           label=reference_label),
                    Line2D([], [], color=_SGD_COLOUR, marker="o", ls="none", ms=3, label="SGD")]
        if t_c is not None:
            handles.append(Line2D([], [], color="0.55", ls=":", lw=0.9,
                                  label=r"$t_c$: larger $M$ stops helping"))
        if radius is not None and times[0] < radius < times[-1]:
            handles.append(Line2D([], [], color=LIMIT_COLOUR, ls="-.", lw=0.7,
                                  label=r"$R$: radius of convergence"))
        if any(c == "blow-up" for c in causes):
            handles.append(Line2D([], [], label="blew up", **_BLOWUP_STYLE))
        if any(c == "left the PSD cone" for c in causes):
            handles.append(Line2D([], [], label="q left PSD cone", **_PSD_EXIT_STYLE))
        # Beside the panels: inside, it hid the early SGD markers and truncations.
        right.legend(handles=handles, frameon=False, fontsize=5.5, loc="center left",
                     bbox_to_anchor=(1.01, 0.5))
        if n_blowups:
            fig.suptitle(f"{n_blowups} SGD run(s) blew up", x=0.995, ha="right", fontsize=6,
                         color="red")
    return fig, {"orders": summary, "t_c": t_c, "radius": radius, "n_sgd_blowups": int(n_blowups),
                 "n_reference_blowups": int(sum(r.blew_up for r in references))}


def _mean_signed(runs: Sequence[Trajectory], quantity) -> tuple[np.ndarray, np.ndarray,
                                                                 np.ndarray]:
    """Times, mean and standard deviation over runs of ``quantity(run)``, record by record.

    Runs share their record grid (SGD replicates of one problem); a run that
    stopped early (blow-up) contributes up to its last record.
    """
    longest = max(runs, key=len)
    values = np.full((len(runs), len(longest)), np.nan)
    for i, run in enumerate(runs):
        values[i, :len(run)] = quantity(run)
    count = np.isfinite(values).sum(axis=0)
    filled = np.where(np.isfinite(values), values, 0.0)
    mean = filled.sum(axis=0) / np.maximum(count, 1)
    var = (np.where(np.isfinite(values), values - mean, 0.0) ** 2).sum(axis=0)
    sd = np.sqrt(var / np.maximum(count - 1, 1))
    mean[count == 0] = np.nan
    return longest.t_ode, mean, sd


def draw_figure_s6(tables: Mapping[float, Mapping[str, np.ndarray]], *,
                   times: Sequence[float], matrix_scale: float,
                   floor: float = 1e-16) -> tuple[Figure, dict]:
    """Figure S6: truncation error of q₁₂ against M at fixed times, one panel per weight decay.

    Parameters
    ----------
    tables : {γ: table of :func:`~aimrepro.paper2.moment_experiments.truncation_error_table`}
    times : the fixed times drawn (the nearest times of the tables' grid are used).
    matrix_scale : the scale of S and S* (for the title).
    floor : errors below it (round-off) are drawn at it.

    Returns
    -------
    Figure, diagnostics
        Per γ the convergence horizon t_c (first grid time at which the
        largest order is not the most accurate) and the times drawn.
    """
    gammas = sorted(tables)
    cmap = colormaps["plasma"]
    colours = [cmap(0.05 + 0.8 * i / max(len(times) - 1, 1)) for i in range(len(times))]
    diagnostics = {}
    with figure_style():
        fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * 1.1))
        axes = fig.subplots(1, len(gammas), sharey=True)
        axes = np.atleast_1d(axes)
        for ax, gamma in zip(axes, gammas):
            table = tables[gamma]
            orders, grid, err = error_matrix(table)
            left_psd = np.zeros_like(err, dtype=bool)
            left_psd[np.searchsorted(orders, table["order"]),
                     np.searchsorted(grid, table["t_ode"])] = table["left_psd"]
            t_c = convergence_horizon(grid[1:], err[:, 1:], list(orders), floor=1e-12)
            shown = []
            top = 10.0
            for colour, t in zip(colours, times):
                i = int(np.argmin(np.abs(grid - t)))
                shown.append(float(grid[i]))
                e = np.maximum(err[:, i], floor)
                finite = np.isfinite(e)
                ax.plot(orders[finite], e[finite], "-o", color=colour, ms=2.2, lw=0.9,
                        label=f"$t = {grid[i]:.2g}$")
                hollow = finite & left_psd[:, i]
                ax.plot(orders[hollow], e[hollow], **{**_PSD_EXIT_STYLE, "markersize": 3.5})
                blown = ~finite
                ax.plot(orders[blown], np.full(blown.sum(), top), **{**_BLOWUP_STYLE,
                                                                   "color": colour})
            ax.set_yscale("log")
            ax.set_ylim(floor / 3, top * 3)
            ax.set_xlabel("truncation order $M$")
            ax.set_title(rf"$\gamma = {gamma:g}$: $t_c$ = "
                         + ("beyond grid" if t_c is None else f"{t_c:.2g}"), fontsize=8)
            diagnostics[f"{gamma:g}"] = {"t_c": t_c, "times_drawn": shown}
        axes[0].set_ylabel(r"$|q_{12}^{(M)}(t) - q_{12}(t)|$")
        axes[-1].legend(frameon=False, fontsize=5.5, loc="center left", bbox_to_anchor=(1.01, 0.5))
        fig.suptitle(f"linear case, S and S* scaled by {matrix_scale:g}: crosses at the top = "
                     "blew up; hollow red = q left the PSD cone", fontsize=6, x=0.5)
    return fig, diagnostics
