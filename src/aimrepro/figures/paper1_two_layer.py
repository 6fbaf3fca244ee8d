"""Paper 1, beyond the paper: the Bayes-optimal error of two attention layers (docs/paper1.md §14).

The figure ``paper1_two_layer`` of the pipeline.

Beyond the paper, which presents the AIM as a framework for deep attention but
solves one layer only.  Left: MMSE₁ (the first layer's S₁) against α; right:
MMSE₂.  One colour per skip strength c, the state evolution of §14.6 as lines
(±2 s.e. of the tables' Monte-Carlo noise as a band), GAMP-RIE of §14.7 as
markers (mean ± error of the mean over seeds; runs that did not settle hollow,
apart; a mean beyond the axis an upward triangle at its edge with its value), the one-layer softmax SE at T = 2 (black dashed) with its threshold
D(ρ)/4 and the two-layer threshold D(ρ)/2 (grey vertical lines), and the c → ∞
limit (black dotted): layer 2 is the one-layer model, layer 1 starts at D/4 and
follows m(α − D/4).  Drawing only: the workflow reads the tables and saves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from aimrepro.figures.style import (ERRORBAR_WIDTH, LIMIT_COLOUR, LINE_WIDTH, MARKER_SIZE, annotate_unconverged,
                                    figure_style, new_figure, plot_theory)

__all__ = ["BAND_SIGMAS", "SKIP_COLOURS", "TwoLayerAMPPoints", "TwoLayerCurve", "amp_points_from_runs",
           "curve_from_table", "draw_two_layer_figure", "skip_colours"]

#: Colours of the skip strengths, smallest c first.
SKIP_COLOURS = ("#577590", "#43aa8b", "#f8961e", "#f94144", "#9b5de5")
#: Half-width of the error bands, in standard errors of the MMSE.
BAND_SIGMAS = 2.0
_THRESHOLD_COLOUR = "0.55"


@dataclass(frozen=True)
class TwoLayerCurve:
    """One two-layer SE curve: MMSE₁, MMSE₂ ± s.e. along α at one skip c (rule ``two_layer_se_curve``)."""

    skip: float
    alpha: np.ndarray
    mmse1: np.ndarray
    mmse2: np.ndarray
    mmse1_stderr: np.ndarray
    mmse2_stderr: np.ndarray
    converged: np.ndarray


def curve_from_table(columns: Mapping[str, np.ndarray], *, skip: float) -> TwoLayerCurve:
    """A :class:`TwoLayerCurve` from the columns of ``two_layer.state_evolution.two_layer_curve``."""
    needed = {"alpha", "mmse1", "mmse2", "mmse1_stderr", "mmse2_stderr", "converged"}
    missing = needed - set(columns)
    if missing:
        raise ValueError(f"two-layer SE table lacks columns {sorted(missing)}; has {list(columns)}")
    return TwoLayerCurve(float(skip), *(np.asarray(columns[k], float) for k in
                                        ("alpha", "mmse1", "mmse2", "mmse1_stderr", "mmse2_stderr")),
                         np.asarray(columns["converged"], bool))


@dataclass(frozen=True)
class TwoLayerAMPPoints:
    """GAMP-RIE at one skip: per α the mean and error of the mean of each layer's error over usable runs,
    and the mean of the runs that did not settle (NaN if none), drawn hollow."""

    skip: float
    alpha: np.ndarray
    mean: np.ndarray          # (k, 2)
    sem: np.ndarray           # (k, 2)
    unsettled_mean: np.ndarray  # (k, 2)
    n_unsettled: int


def amp_points_from_runs(skip: float, runs: Mapping[float, Sequence[Mapping]]) -> TwoLayerAMPPoints:
    """Markers from run summaries (``two_layer.amp.load_run_summary``) grouped by α.

    Usable runs (``amp.USABLE_STATUSES``) are averaged; the others are averaged apart.
    """
    from aimrepro.paper1.two_layer.amp import USABLE_STATUSES

    alphas = np.array(sorted(runs), dtype=float)
    mean, sem, unsettled = (np.full((alphas.size, 2), np.nan) for _ in range(3))
    n_unsettled = 0
    for i, alpha in enumerate(alphas):
        usable = [r for r in runs[alpha] if r["status"] in USABLE_STATUSES]
        other = [r for r in runs[alpha] if r["status"] not in USABLE_STATUSES and np.isfinite(r["error1"])]
        n_unsettled += len(other)
        if usable:
            errors = np.array([[r["error1"], r["error2"]] for r in usable])
            mean[i] = errors.mean(axis=0)
            sem[i] = errors.std(axis=0, ddof=1) / np.sqrt(len(usable)) if len(usable) > 1 else 0.0
        if other:
            unsettled[i] = np.array([[r["error1"], r["error2"]] for r in other]).mean(axis=0)
    return TwoLayerAMPPoints(float(skip), alphas, mean, sem, unsettled, n_unsettled)


def skip_colours(skips: Sequence[float]) -> dict[float, str]:
    """Map each distinct c to a colour, smallest first."""
    distinct = sorted({float(c) for c in skips})
    if len(distinct) > len(SKIP_COLOURS):
        raise ValueError(f"the figure can show at most {len(SKIP_COLOURS)} skip strengths, got {len(distinct)}")
    return dict(zip(distinct, SKIP_COLOURS))


#: The top of both panels' error axis; GAMP-RIE means beyond it are marked at the edge (_mark_off_scale).
_Y_TOP = 1.05


def _mark_off_scale(ax, alpha: np.ndarray, mean: np.ndarray, colour: str) -> int:
    """Upward triangles at the top edge for means beyond ``_Y_TOP``, each labelled with its value; their count."""
    for a, m in zip(alpha, mean):
        ax.plot([a], [_Y_TOP], linestyle="none", marker="^", markersize=1.8 * MARKER_SIZE, color=colour,
                clip_on=False, zorder=5)
        ax.annotate(f"{m:.3g}", (a, _Y_TOP), xytext=(3, -8), textcoords="offset points", fontsize=6, color=colour)
    return len(alpha)


def draw_two_layer_figure(curves: Sequence[TwoLayerCurve], *, one_layer_alpha: np.ndarray,
                          one_layer_mmse: np.ndarray, one_layer_converged: np.ndarray,
                          limit_alpha: np.ndarray, limit_mmse1: np.ndarray, limit_mmse2: np.ndarray,
                          thresholds: tuple[float, float],
                          amp: Sequence[TwoLayerAMPPoints] = ()) -> tuple[Figure, int]:
    """MMSE₁ (left) and MMSE₂ (right) against α (module notes); returns the figure and its unconverged SE points.

    Parameters
    ----------
    curves : the two-layer SE curves, one per skip c
    one_layer_alpha, one_layer_mmse, one_layer_converged : the one-layer softmax SE at T = 2, same ρ
    limit_alpha, limit_mmse1, limit_mmse2 : the c → ∞ limit (``state_evolution.large_skip_limit``)
    thresholds : (one-layer D/4, two-layer D/2)
    amp : GAMP-RIE markers per skip (optional)
    """
    curves = list(curves)
    if not curves:
        raise ValueError("the two-layer figure needs at least one SE curve")
    colours = skip_colours([c.skip for c in curves] + [a.skip for a in amp])
    alpha_max = max(float(np.max(c.alpha)) for c in curves)
    n_unconverged = n_off_scale = 0
    with figure_style():
        fig, axes = new_figure()
        for layer, ax in enumerate(axes):
            for curve in curves:
                colour = colours[curve.skip]
                mmse = curve.mmse1 if layer == 0 else curve.mmse2
                stderr = curve.mmse1_stderr if layer == 0 else curve.mmse2_stderr
                n_unconverged += plot_theory(ax, curve.alpha, mmse, curve.converged, colour=colour)
                band = BAND_SIGMAS * np.where(curve.converged, stderr, np.nan)
                ax.fill_between(curve.alpha, mmse - band, mmse + band, color=colour, alpha=0.25, linewidth=0)
            plot_theory(ax, one_layer_alpha, one_layer_mmse, one_layer_converged, colour=LIMIT_COLOUR,
                        linestyle="--", linewidth=0.9 * LINE_WIDTH)
            ax.plot(limit_alpha, limit_mmse1 if layer == 0 else limit_mmse2, color=LIMIT_COLOUR, linestyle=":",
                    linewidth=LINE_WIDTH)
            for value, style in zip(thresholds, (":", "--")):
                ax.axvline(value, color=_THRESHOLD_COLOUR, linestyle=style, linewidth=0.8, zorder=0)
            for points in amp:
                colour = colours[points.skip]
                mean = points.mean[:, layer]
                shown = mean <= _Y_TOP
                ax.errorbar(points.alpha[shown], mean[shown], yerr=points.sem[shown, layer], linestyle="none",
                            marker="o", markersize=1.6 * MARKER_SIZE, color=colour, elinewidth=ERRORBAR_WIDTH,
                            capsize=0, zorder=4)
                hollow = np.isfinite(points.unsettled_mean[:, layer])
                if hollow.any():
                    ax.plot(points.alpha[hollow], np.minimum(points.unsettled_mean[hollow, layer], _Y_TOP),
                            linestyle="none", marker="o", markersize=2.2 * MARKER_SIZE, markerfacecolor="none",
                            markeredgecolor=colour, markeredgewidth=0.7, zorder=4)
                # a mean beyond the axis is drawn at its top edge with its value, never dropped
                n_off_scale += _mark_off_scale(ax, points.alpha[~shown], mean[~shown], colour)
            ax.set(xlim=(0.0, 1.05 * alpha_max), ylim=(0.0, _Y_TOP), xlabel=r"$\alpha = n/d^2$",
                   ylabel=f"MMSE$_{layer + 1}$ (layer {layer + 1})")
        handles = [Line2D([], [], color=colours[c.skip], label=f"c = {c.skip:g}") for c in curves]
        handles += [Line2D([], [], color=LIMIT_COLOUR, linestyle="--", label="one layer"),
                    Line2D([], [], color=LIMIT_COLOUR, linestyle=":", label=r"$c \to \infty$"),
                    Line2D([], [], color=_THRESHOLD_COLOUR, linestyle=":", label=r"$D/4$"),
                    Line2D([], [], color=_THRESHOLD_COLOUR, linestyle="--", label=r"$D/2$"),
                    Patch(color="0.3", alpha=0.25, label=rf"$\pm{BAND_SIGMAS:g}$ s.e.")]
        if amp:
            handles.append(Line2D([], [], color="0.3", marker="o", linestyle="none", markersize=1.6 * MARKER_SIZE,
                                  label="GAMP-RIE"))
        if n_off_scale:
            handles.append(Line2D([], [], color="0.3", marker="^", linestyle="none", markersize=1.6 * MARKER_SIZE,
                                  label="GAMP-RIE off scale (mean)"))
        axes[1].legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False, fontsize=6.5)
        annotate_unconverged(fig, n_unconverged, sum(a.n_unsettled for a in amp))
    return fig, n_unconverged
