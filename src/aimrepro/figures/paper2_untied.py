"""Layout of paper 2's Figure 3 and the supplementary Figures S4, S5: untied attention (``docs/paper2.md`` §6).

The functions only draw results the pipeline computed, in the shared style
of :mod:`aimrepro.figures.style`: SGD as markers (mean ± s.d. over replicates),
theory as lines.  The per-replicate theory is the population flow of U, V
at the run's d (:func:`aimrepro.paper2.untied.slow.untied_reference`); the
d → ∞ theory is the fast mean flow [P eq. 28] and the slaved slow flow
[P eqs. 29–32].  Runs that blew up are counted on the figure and never drawn
past their blow-up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aimrepro.paper2.trajectory import Trajectory
from aimrepro.paper2.analysis import escape_time, mean_at, plateau_level, student_mean
from aimrepro.figures.paper2_dynamics import LINK_COLOURS
from aimrepro.figures.style import (ERRORBAR_WIDTH, LIMIT_COLOUR, LINE_WIDTH, MARKER_SIZE,
                                    figure_style, new_figure, rho_colours)

__all__ = ["draw_figure3", "draw_figure_s4", "draw_figure_s5"]

_THRESHOLD_COLOUR = "0.6"
_OVERLAP_LABEL = r"symmetric overlap $|s|$"


def _on_grid(runs: Sequence[Trajectory], x_of, y_of, grid: np.ndarray) -> np.ndarray:
    """Replicates' y(x) interpolated onto ``grid``, NaN past each run's end: (runs, grid)."""
    out = np.full((len(runs), grid.size), np.nan)
    for i, run in enumerate(runs):
        x, y = x_of(run), y_of(run)
        if len(run):
            inside = grid <= x[-1] + 1e-12
            out[i, inside] = np.interp(grid[inside], x, y)
    return out


def _stats(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    count = np.sum(np.isfinite(values), axis=0)
    with np.errstate(invalid="ignore"):   # columns nobody reached stay NaN
        mean = np.nanmean(np.where(count > 0, values, 0.0), axis=0)
        std = np.sqrt(np.nanmean((values - mean) ** 2, axis=0))
    mean[count == 0] = np.nan
    return mean, std


def _markers(ax, runs, x_of, y_of, grid, colour, label, marker="o"):
    values = _on_grid(runs, x_of, y_of, grid)
    mean, std = _stats(values)
    ax.errorbar(grid, mean, yerr=std, fmt=marker, ms=MARKER_SIZE, lw=ERRORBAR_WIDTH,
                color=colour, label=label)


def _line(ax, runs, x_of, y_of, grid, colour, **style):
    """Mean over replicates, drawn only where every replicate has a value."""
    values = _on_grid(runs, x_of, y_of, grid)
    full = np.all(np.isfinite(values), axis=0)
    mean = np.where(full, np.mean(np.where(full, values, 0.0), axis=0), np.nan)
    ax.plot(grid, mean, color=colour, lw=style.pop("lw", LINE_WIDTH), **style)


def _blowups(fig: Figure, groups) -> int:
    n = sum(run.blew_up for runs in groups for run in runs)
    if n:
        fig.suptitle(f"{n} run(s) blew up and stop there", x=0.995, ha="right", fontsize=6,
                     color="red")
    return n


def _tau(run: Trajectory) -> np.ndarray:
    return run.t_ode


def _t_fast(run: Trajectory) -> np.ndarray:
    return run.t_ode * run.d


def _abs_overlap(run: Trajectory) -> np.ndarray:
    return np.abs(run.symmetric_overlap)


def draw_figure3(runs: Mapping[str, Sequence[Trajectory]],
                 flows: Mapping[str, Sequence[Trajectory]], links: Sequence[str], *,
                 threshold: float, plateau: Mapping[int, Sequence[Trajectory]] | None = None,
                 plateau_link: str | None = None, plateau_start: float | None = None,
                 n_markers: int = 30) -> tuple[Figure, dict]:
    """Figure 3: |symmetric overlap| against τ for each link, linear (left) and log (right) scale.

    Every replicate is drawn: SGD as markers, the population flow from its own
    initial state as a thin line of the same colour (escape times differ
    between replicates, so a mean curve would blur them).  The right panel
    shows the escape from the O(1/d) initial overlap.  The overlap s is
    Tr(S̊₁⁺S̊₂⁺)/Tr(S̊₂⁺²), S⁺ = M + Mᵀ: the text's "overlap between M₁ + M₁ᵀ and
    M₂ + M₂ᵀ" divided by the teacher's constant norm.

    With ``plateau`` ({d: SGD replicates of ``plateau_link``}) an inset of the
    right panel draws the level at which that link's overlap levels off (mean
    |s| over τ ≥ ``plateau_start``, mean ± s.e. over replicates) against d,
    on log axes with a 1/d guide.
    """
    markers = ("o", "s", "^", "v", "D", "P")
    with figure_style():
        fig, (left, right) = new_figure()
        for link in links:
            colour = LINK_COLOURS.get(link, LIMIT_COLOUR)
            for i, run in enumerate(runs[link]):
                step = max(1, len(run) // n_markers)
                for ax in (left, right):
                    ax.plot(run.t_ode[::step], np.abs(run.symmetric_overlap[::step]),
                            markers[i % len(markers)], ms=MARKER_SIZE + 0.5, color=colour,
                            mfc="none" if i else colour, mew=0.6, ls="none")
                    if run.blew_up:
                        ax.plot([run.t_blowup], [abs(run.symmetric_overlap[-1])], "x",
                                color="red", ms=4.5)
            for flow in flows.get(link, []):
                for ax in (left, right):
                    ax.plot(flow.t_ode, np.abs(flow.symmetric_overlap), color=colour, lw=0.9)
        for ax in (left, right):
            ax.axhline(threshold, color=_THRESHOLD_COLOUR, lw=0.8, ls="--", zorder=0)
            ax.set_xlabel(r"slow time $\tau = \alpha n/d$")
        left.set_ylim(-0.03, 1.05)
        right.set_yscale("log")
        right.set_ylim(1e-4, 1.5)
        left.set_ylabel(_OVERLAP_LABEL)
        left.set_title(r"untied $S = UV^\top$, one token")
        handles = [Line2D([], [], color=LINK_COLOURS.get(l, LIMIT_COLOUR), marker="o", ms=3,
                          lw=0.9, label=l) for l in links]
        handles += [Line2D([], [], color="0.3", marker="o", ls="none", ms=3,
                           label="SGD (one marker per seed)"),
                    Line2D([], [], color="0.3", lw=0.9, label="population flow, same start")]
        # Beside the panels: inside, it covered the h3 flows on the log axis.
        right.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5),
                     frameon=False, fontsize=6)
        if plateau and plateau_start is not None:
            _plateau_inset(right, plateau, plateau_start,
                           LINK_COLOURS.get(plateau_link, LIMIT_COLOUR), plateau_link)
        n = _blowups(fig, list(runs.values()))
    return fig, {"n_blowups": n,
                 "n_flow_blowups": sum(f.blew_up for g in flows.values() for f in g)}


def _plateau_inset(ax, plateau: Mapping[int, Sequence[Trajectory]], start: float, colour: str,
                   link: str | None) -> None:
    """Plateau level against d (log–log), mean ± s.e. over replicates, with a 1/d guide."""
    dims = sorted(plateau)
    levels = [np.array([plateau_level(run, start) for run in plateau[d]]) for d in dims]
    mean = np.array([np.nanmean(v) for v in levels])
    sem = np.array([np.nanstd(v, ddof=1) / np.sqrt(np.sum(np.isfinite(v))) if v.size > 1 else 0.0
                    for v in levels])
    inset = ax.inset_axes([0.56, 0.08, 0.4, 0.36])
    inset.errorbar(dims, mean, yerr=np.minimum(sem, 0.9 * mean), fmt="o", ms=MARKER_SIZE + 1,
                   lw=ERRORBAR_WIDTH, color=colour)
    inset.plot(dims, mean[0] * dims[0] / np.asarray(dims, float), color=LIMIT_COLOUR, lw=0.7,
               ls=":")
    inset.set_xscale("log")
    inset.set_yscale("log")
    inset.set_xticks(dims, [str(d) for d in dims])
    inset.minorticks_off()
    inset.tick_params(labelsize=5)
    inset.set_xlabel(r"$d$", fontsize=5, labelpad=1)
    inset.set_title(f"{link or ''} plateau " + rf"$\langle|s|\rangle_{{\tau\geq {start:g}}}$"
                    + r", $\propto 1/d$ dotted", fontsize=5, pad=2)


def _overlap_magnitude(run: Trajectory) -> np.ndarray:
    return np.abs(run.symmetric_overlap)


def draw_figure_s4(runs: Mapping[int, Sequence[Trajectory]],
                   flows: Mapping[int, Sequence[Trajectory]], limits: Sequence[Trajectory], *,
                   fast_horizon: float, horizon: float, n_markers: int = 25) -> Figure:
    """Figure S4: the mean against t = lr n (left) and the overlap against τ = lr n/d (right).

    One colour per d: SGD markers, population-flow lines.  Black dashed: the
    d → ∞ theory, the fast flow [P eq. 28] (left, from the largest d's
    initial state) and the slaved slow flow (right).  The overlap panel shows |s|:
    for an even link S → −S is a symmetry, and each replicate escapes on the branch
    sign(m*·m₂) its initial state selects, so signed means would mix the branches.
    """
    dims = sorted(runs)
    colours = rho_colours(dims)
    fast_grid = np.linspace(0.0, fast_horizon, n_markers)
    slow_grid = np.linspace(0.0, horizon, n_markers)
    with figure_style():
        fig, (left, right) = new_figure()
        for d in dims:
            _markers(left, runs[d], _t_fast, student_mean, fast_grid, colours[d], f"d = {d}")
            _markers(right, runs[d], _tau, _overlap_magnitude, slow_grid, colours[d],
                     f"d = {d}")
            if flows.get(d):
                _line(left, flows[d], _t_fast, lambda r: r.extra["m_flow"],
                      np.linspace(0, fast_horizon, 300), colours[d], lw=0.9)
                _line(right, flows[d], _tau, _overlap_magnitude,
                      np.linspace(0, horizon, 300), colours[d], lw=0.9)
        largest = flows.get(dims[-1], [])
        if largest:
            _line(left, largest, _t_fast, lambda r: r.extra["m_fast"],
                  np.linspace(0, fast_horizon, 300), LIMIT_COLOUR, ls="--", lw=1.0)
        if limits:
            _line(right, limits, _tau, _overlap_magnitude,
                  np.linspace(0, horizon, 300), LIMIT_COLOUR, ls="--", lw=1.0)
        left.set_xlabel(r"fast time $t = \alpha n$")
        left.set_ylabel(r"student mean $m = \mathrm{Tr}\,UV^\top/\sqrt{d}$")
        right.set_xlabel(r"slow time $\tau = \alpha n/d$")
        right.set_ylabel(r"symmetric overlap $|s|$")
        left.legend(frameon=False, fontsize=6, loc="lower right")
        handles = [Line2D([], [], color="0.3", marker="o", ls="none", ms=3, label="SGD"),
                   Line2D([], [], color="0.3", lw=0.9, label="population flow"),
                   Line2D([], [], color=LIMIT_COLOUR, ls="--", lw=1.0,
                          label=r"$d\to\infty$: eq. 28 / slaved flow")]
        right.legend(handles=handles, frameon=False, fontsize=6, loc="lower right")
        _blowups(fig, list(runs.values()))
    return fig


def draw_figure_s5(runs: Mapping[tuple[float, int], Sequence[Trajectory]],
                   flows: Mapping[tuple[float, int], Sequence[Trajectory]],
                   fast_states: Mapping[str, np.ndarray], *, threshold: float, horizon: float,
                   fast_horizon: float,
                   instability: Mapping[tuple[float, int], Sequence[float]] | None = None
                   ) -> Figure:
    """Figure S5: escape time against the teacher mean for each d (left); the fast state (right).

    Left: τ_esc (|s| ≥ threshold) of SGD (markers, mean ± s.d.; hollow at the
    horizon if some replicate did not escape) and of the population flows
    (solid lines), one colour per d.  Dashed: the instability time τ_inst of
    the flows (:func:`aimrepro.paper2.analysis.instability_time`, mean over
    replicates), at which the symmetric fast state m = 0 stops being a minimum
    as the student variance shrinks; where m = 0 is unstable from the start it
    is 0 and not drawn.  Only m₂ = 0 stalls: every m₂ ≠ 0 escapes once m = 0
    has lost stability (``docs/paper2.md`` §5.3).  Right: the student mean at
    t = fast_horizon (markers, every replicate) against the fast fixed points
    m*(q(0)) (lines).
    """
    means = sorted({m2 for m2, _ in runs})
    dims = sorted({d for _, d in runs})
    colours = rho_colours(dims)
    spacing = (means[-1] - means[0]) / max(len(means) - 1, 1)
    offsets = {d: (i - (len(dims) - 1) / 2) * 0.06 * spacing for i, d in enumerate(dims)}
    instability = instability or {}
    with figure_style():
        fig, (left, right) = new_figure()
        for d in dims:
            sgd_mean, sgd_std, censored, flow_mean, inst_mean = [], [], [], [], []
            for m2 in means:
                times = np.array([escape_time(run, threshold) for run in runs[(m2, d)]])
                capped = np.where(np.isfinite(times), times, horizon)
                sgd_mean.append(capped.mean())
                sgd_std.append(capped.std())
                censored.append(not np.all(np.isfinite(times)))
                flow_times = [escape_time(run, threshold) for run in flows.get((m2, d), [])]
                flow_mean.append(np.mean(flow_times) if flow_times
                                 and all(math.isfinite(t) for t in flow_times) else np.nan)
                inst = np.asarray(instability.get((m2, d), []), dtype=float)
                inst_mean.append(float(np.mean(inst)) if inst.size and np.all(np.isfinite(inst))
                                 and np.all(inst > 0) else np.nan)
            x = np.asarray(means) + offsets[d]
            sgd_mean, sgd_std, censored = map(np.asarray, (sgd_mean, sgd_std, censored))
            left.errorbar(x[~censored], sgd_mean[~censored], yerr=sgd_std[~censored], fmt="o",
                          ms=MARKER_SIZE + 1, lw=ERRORBAR_WIDTH, color=colours[d],
                          label=f"d = {d}")
            if censored.any():
                left.plot(x[censored], sgd_mean[censored], "o", mfc="none", color=colours[d],
                          ms=MARKER_SIZE + 2)
            left.plot(means, flow_mean, color=colours[d], lw=0.9)
            if instability:
                left.plot(means, inst_mean, color=colours[d], lw=0.8, ls="--")
            for m2 in means:
                for run in runs[(m2, d)]:
                    # a run that escaped (and stopped) before the read time: its last mean, hollow
                    early = run.t_ode[-1] * run.d < fast_horizon
                    value = mean_at(run, min(fast_horizon, run.t_ode[-1] * run.d))
                    right.plot([m2 + offsets[d]], [value], "o", ms=MARKER_SIZE + 0.5,
                               color=colours[d], mfc="none" if early else colours[d], mew=0.6)
        m2_grid = np.asarray(fast_states["m2"])
        for key in ("m_star_plus", "m_star_minus"):
            right.plot(m2_grid, fast_states[key], color=LIMIT_COLOUR, lw=1.0)
        for ax in (left, right):
            ax.set_xlabel(r"teacher mean $m_2$")
        left.set_yscale("log")
        left.set_ylabel(rf"escape time $\tau_{{esc}}$ ($|s| \geq {threshold:g}$)")
        handles, labels = left.get_legend_handles_labels()
        handles += [Line2D([], [], color="0.3", lw=0.9, label="population flow"),
                    Line2D([], [], color="0.3", lw=0.8, ls="--",
                           label=r"$\tau_{inst}$: $m = 0$ unstable")]
        left.legend(handles=handles, frameon=False, fontsize=6, loc="upper right")
        right.set_ylabel(rf"student mean at $t = {fast_horizon:g}$")
        _blowups(fig, list(runs.values()))
    return fig
