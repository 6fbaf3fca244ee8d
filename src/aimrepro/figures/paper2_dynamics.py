"""Layout of paper 2's Figure 2 and the supplementary Figures S1–S3 (``docs/paper2.md`` §6).

The functions only draw: they receive trajectories and tables already
computed by the pipeline and return a :class:`~matplotlib.figure.Figure` in
the shared style of :mod:`aimrepro.figures.style` (theory as lines, simulations
as markers with error bars over seeds).  Runs that blew up are never drawn
past their blow-up: each is marked by a red cross at its last finite value
and counted on the figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aimrepro.paper2.trajectory import Trajectory
from aimrepro.figures.style import (ERRORBAR_WIDTH, LIMIT_COLOUR, LINE_WIDTH, MARKER_SIZE,
                                    figure_style, new_figure)

__all__ = [
    "LINK_COLOURS",
    "PARAM_MARKERS",
    "draw_figure2",
    "draw_figure_s1",
    "draw_figure_s2",
    "draw_figure_s3",
    "mean_over_runs",
]

#: One colour per link, shared by every paper-2 figure.
LINK_COLOURS = {"h1": "#577590", "linear": "#577590", "h2": "#43aa8b", "h3": "#f3722c",
                "softmax": "#90be6d", "hardmax": "#f8961e"}
PARAM_MARKERS = {"tied": "o", "direct": "s", "untied": "^"}
PARAM_TITLES = {"tied": r"tied $S = WW^\top$", "direct": r"direct $S$",
                "untied": r"untied $S = UV^\top$"}
_BLOWUP_STYLE = {"linestyle": "none", "marker": "x", "markersize": 4.5, "color": "red",
                 "markeredgewidth": 1.0, "zorder": 6}
_THRESHOLD_COLOUR = "0.6"
_OVERLAP_LABEL = r"overlap $|p_{12}|/p_{22}$"


def mean_over_runs(runs: Sequence[Trajectory], quantity: str = "overlap_ratio") -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean and standard deviation over runs sharing a time grid, record by record.

    Runs may end early (blow-up, early stop): at each record the statistics
    use the runs that reached it.

    Returns
    -------
    t, mean, std, count : (n,) ndarrays on the longest run's grid
    """
    if not runs:
        raise ValueError("no runs to average")
    longest = max(runs, key=len)
    n = len(longest)
    values = np.full((len(runs), n), np.nan)
    for i, run in enumerate(runs):
        if not np.allclose(run.t_ode, longest.t_ode[:len(run)], rtol=1e-9, atol=1e-12):
            raise ValueError("runs to average must share their time grid")
        values[i, :len(run)] = getattr(run, quantity)
    count = np.sum(np.isfinite(values), axis=0)
    with np.errstate(invalid="ignore"):  # records nobody reached stay NaN
        mean = np.nanmean(np.where(count > 0, values, 0.0), axis=0)
        std = np.sqrt(np.nanmean((values - mean) ** 2, axis=0) * count / np.maximum(count - 1, 1))
    mean[count == 0] = np.nan
    return longest.t_ode, mean, std, count


def _dimension_axes(axes, dims) -> None:
    """Logarithmic d axes ticked at the simulated dimensions."""
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xticks(list(dims), [str(int(x)) for x in dims])
        ax.minorticks_off()
        ax.set_xlabel(r"$d$")


def _annotate_blowups(fig: Figure, n_blowups: int) -> None:
    if n_blowups:
        fig.suptitle(f"{n_blowups} SGD run(s) blew up: red crosses at the last finite value",
                     x=0.995, ha="right", fontsize=6, color="red")


def draw_figure2(runs: Mapping[tuple[str, str], Sequence[Trajectory]],
                 flows: Mapping[tuple[str, str], Sequence[Trajectory]],
                 links: Sequence[str], *, threshold: float,
                 exact: Mapping[str, Sequence[Trajectory]] | None = None,
                 samples_per_time: Mapping[str, float] | None = None,
                 n_markers: int = 25) -> tuple[Figure, dict]:
    """Figure 2: overlap against samples (or t_ode), tied (left) and direct (right), one colour per link.

    Parameters
    ----------
    runs : {(param, link): [Trajectory, ...]}
        SGD replicates; markers are their mean, error bars their standard deviation.
    flows : {(param, link): [Trajectory, ...]}
        Reference flows from the same initial states (the d → ∞ equations: tied
        matrix flow, direct closed ODE); the solid line is their mean.
    links : sequence of str
    threshold : float
        Weak-recovery threshold, drawn as a grey dashed line.
    exact : {link: [Trajectory, ...]}, optional
        The exact finite-d tied flows from the same W(0) (what SGD follows at
        finite d), drawn dashed in the tied panel.
    samples_per_time : {param: float}, optional
        Samples per unit of t_ode (:func:`aimrepro.paper2.analysis.samples_per_time`):
        with it both panels share one sample axis, as the paper's figure;
        without it each panel is drawn against its own t_ode.
    n_markers : int
        About this many SGD markers per curve.

    Returns
    -------
    Figure, diagnostics
        ``n_blowups`` (SGD runs) and ``n_flow_blowups``.
    """
    n_blowups = n_flow_blowups = 0
    exact = exact or {}

    def axis(param: str) -> float:
        return 1.0 if samples_per_time is None else samples_per_time[param] / 1e6

    with figure_style():
        fig, axes = new_figure()
        if samples_per_time is not None:
            axes[0].sharex(axes[1])
        for ax, param in zip(axes, ("tied", "direct")):
            scale = axis(param)
            for link in links:
                colour = LINK_COLOURS.get(link, LIMIT_COLOUR)
                group = runs.get((param, link), [])
                if group:
                    t, mean, std, _ = mean_over_runs(group)
                    step = max(1, len(t) // n_markers)
                    ax.errorbar(scale * t[::step], mean[::step], yerr=std[::step], fmt="o",
                                ms=MARKER_SIZE, lw=ERRORBAR_WIDTH, color=colour,
                                label=f"{link} SGD")
                    for run in group:
                        if run.blew_up:
                            n_blowups += 1
                            last = run.overlap_ratio[-1] if len(run) else 0.0
                            ax.plot([scale * run.t_blowup], [last], **_BLOWUP_STYLE)
                theory = flows.get((param, link), [])
                if theory:
                    t, mean, _, count = mean_over_runs(theory)
                    n_flow_blowups += sum(fl.blew_up for fl in theory)
                    full = count == len(theory)  # never average over a partial set
                    ax.plot(scale * t[full], mean[full], color=colour, lw=LINE_WIDTH)
                finite = exact.get(link, []) if param == "tied" else []
                if finite:
                    t, mean, _, count = mean_over_runs(finite)
                    n_flow_blowups += sum(fl.blew_up for fl in finite)
                    full = count == len(finite)
                    ax.plot(scale * t[full], mean[full], color=colour, lw=LINE_WIDTH, ls="--")
            ax.axhline(threshold, color=_THRESHOLD_COLOUR, lw=0.8, ls="--", zorder=0)
            ax.set_title(PARAM_TITLES[param])
            ax.set_xlabel(r"samples $n$ ($10^6$)" if samples_per_time is not None
                          else r"time $t$ (ODE units)")
            ax.set_ylim(-0.03, 1.1)
        axes[0].set_ylabel(_OVERLAP_LABEL)
        handles = [Line2D([], [], color=LINK_COLOURS.get(l, LIMIT_COLOUR), marker="o", ms=3,
                          lw=LINE_WIDTH, label=l) for l in links]
        handles += [Line2D([], [], color="0.3", marker="o", ls="none", ms=3, label="SGD"),
                    Line2D([], [], color="0.3", lw=LINE_WIDTH, label=r"flow ($d\to\infty$ eqs.)")]
        if exact:
            handles.append(Line2D([], [], color="0.3", lw=LINE_WIDTH, ls="--",
                                  label=r"exact finite-$d$ flow"))
        axes[1].legend(handles=handles, loc="center right", frameon=False, fontsize=6)
        _annotate_blowups(fig, n_blowups)
    return fig, {"n_blowups": n_blowups, "n_flow_blowups": n_flow_blowups}


def draw_figure_s1(rows: Sequence[Mapping[str, float]], links: Sequence[str]) -> Figure:
    """Figure S1: finite-d loss over Φ(q) (left) and the relative gap |L_d − Φ|/Φ (right) against d.

    ``rows`` are the one-row tables of rule ``theorem1`` (one per d).  The
    linear link uses the plain Monte-Carlo mean (its control-variate estimate
    equals Φ by construction).
    """
    rows = sorted(rows, key=lambda r: r["d"])
    d = np.array([r["d"] for r in rows])
    reference_gap = None  # anchors the ‖S‖_op/‖S‖_F guide line at the first gap drawn
    with figure_style():
        fig, (left, right) = new_figure()
        for link in links:
            colour = LINK_COLOURS.get(link, LIMIT_COLOUR)
            key = "plain" if link in ("linear", "h1") else "mc"
            value = np.array([r[f"{link}_{key}"] for r in rows])
            err = np.array([r[f"{link}_{key}_stderr"] for r in rows])
            phi = np.array([r[f"{link}_phi"] for r in rows])
            left.errorbar(d, value / phi, yerr=err / phi, fmt="o-", ms=MARKER_SIZE + 1,
                          lw=ERRORBAR_WIDTH, color=colour, label=link)
            if key == "plain":
                continue  # quadratic loss: no gap beyond Monte-Carlo noise (left panel)
            gap = np.abs(value - phi) / phi
            right.errorbar(d, gap, yerr=np.minimum(err / phi, 0.99 * gap), fmt="o-",
                           ms=MARKER_SIZE + 1, lw=ERRORBAR_WIDTH, color=colour, label=link)
            if reference_gap is None:
                reference_gap = gap[0]
        left.axhline(1.0, color=LIMIT_COLOUR, lw=0.8)
        left.set_ylabel(r"finite-$d$ loss / $\Phi(q)$")
        left.legend(frameon=False)
        ratio = np.array([r["op_over_frob"] for r in rows])
        if reference_gap is not None:
            right.plot(d, ratio * reference_gap / ratio[0], color=LIMIT_COLOUR, ls="--", lw=0.9,
                       label=r"$\propto \|S\|_{op}/\|S\|_F$")
        right.set_yscale("log")
        _dimension_axes((left, right), d)
        right.set_ylabel(r"$|L_d - \Phi(q)|/\Phi(q)$")
        right.legend(frameon=False, fontsize=6)
    return fig


def draw_figure_s2(tables: Mapping[str, Mapping[str, np.ndarray]], *, rho: float,
                   heatmap_link: str) -> Figure:
    """Figure S2: Φ against the cosine at q₁₁ = q₂₂ (left), Φ over (q₁₁, q₁₂) (right).

    The tied uninformative point has cosine ρ/(1 + ρ) (q₁₂ = t₁t₂ = ρ at the AIM
    scalings, ``docs/paper2.md`` §3.4); the direct one has q₁₂ = 0; the minimum is
    q₁₁ = q₁₂ = q₂₂.
    """
    tied_cosine = rho / (1.0 + rho)
    with figure_style():
        fig, (left, right) = new_figure()
        for link, table in tables.items():
            q11, q22 = table["q11"], table["q22"]
            on_curve = np.isclose(q11, q22) & np.isfinite(table["phi"])
            cosine, phi = table["cosine"][on_curve], table["phi"][on_curve]
            order = np.argsort(cosine)
            cosine, phi = cosine[order], phi[order]
            at_zero = np.interp(0.0, cosine, phi)
            left.plot(cosine, phi / at_zero, color=LINK_COLOURS.get(link, LIMIT_COLOUR),
                      label=link)
        left.axvline(tied_cosine, color="0.3", ls="--", lw=0.8)
        left.axvline(0.0, color="0.3", ls=":", lw=0.8)
        left.text(tied_cosine, 0.05, " tied init", fontsize=6, transform=left.get_xaxis_transform())
        left.text(0.0, 0.15, " direct init", fontsize=6, transform=left.get_xaxis_transform())
        left.set_xlabel(r"cosine $q_{12}/\sqrt{q_{11}q_{22}}$ at $q_{11} = q_{22}$")
        left.set_ylabel(r"$\Phi / \Phi(q_{12} = 0)$")
        left.legend(frameon=False)

        table = tables[heatmap_link]
        q11_values = np.unique(table["q11"])
        q12_values = np.unique(table["q12"])
        grid = np.full((q12_values.size, q11_values.size), np.nan)
        i = np.searchsorted(q11_values, table["q11"])
        j = np.searchsorted(q12_values, table["q12"])
        grid[j, i] = table["phi"]
        mesh = right.pcolormesh(q11_values, q12_values, grid, shading="nearest", cmap="viridis")
        fig.colorbar(mesh, ax=right, label=rf"$\Phi$ ({heatmap_link})")
        q22 = float(table["q22"][0])
        boundary = np.linspace(0, q11_values.max(), 200)
        for sign in (1, -1):
            right.plot(boundary, sign * np.sqrt(boundary * q22), color="white", lw=0.8)
        right.plot([q22], [rho], "o", color="white", mec="black", ms=5, label="tied init")
        right.plot([q22], [0.0], "s", color="white", mec="black", ms=4, label="direct init")
        right.plot([q22], [q22], "*", color="red", ms=7, label="minimum")
        right.set_xlabel(r"$q_{11}$")
        right.set_ylabel(r"$q_{12}$")
        right.legend(frameon=False, fontsize=6, loc="lower right")
    return fig


def draw_figure_s3(points: Sequence[Mapping], *, horizon: Mapping[str, float],
                   flow_trend: Sequence[Mapping] | None = None) -> Figure:
    """Figure S3: weak-recovery time (left) and samples/(d² ln d) (right) against d.

    ``flow_trend`` (optional): one mapping per (param, link, d) with ``times``
    (T_wr of the reference flows of more replicates and d than the SGD runs,
    the horizon where a flow does not cross) and ``samples_scaled`` (the same
    in N/(d² ln d) at the runs' rate); drawn as hollow diamonds (mean ± error
    of the mean) joined by a thin dotted line.

    Parameters
    ----------
    points : sequence of mappings
        One per (param, link, d): ``param``, ``link``, ``d``, ``times`` (weak-
        recovery times of the replicates, NaN when not reached),
        ``samples_scaled`` (N_wr/(d² ln d) per replicate, NaN when not
        reached) and, optionally, ``flow_times`` and ``flow_samples_scaled``
        of the reference flows from the same initial states (drawn as lines).
    horizon : {param: t_ode}
        Runs that did not recover are drawn as hollow markers at the horizon.
    """
    with figure_style():
        fig, (left, right) = new_figure()
        groups: dict[tuple[str, str], list[Mapping]] = {}
        for point in points:
            groups.setdefault((point["param"], point["link"]), []).append(point)
        for (param, link), group in groups.items():
            group = sorted(group, key=lambda p: p["d"])
            colour = LINK_COLOURS.get(link, LIMIT_COLOUR)
            marker = PARAM_MARKERS.get(param, "o")
            for ax, key in ((left, "times"), (right, "samples_scaled")):
                d, mean, err, trapped = [], [], [], []
                for point in group:
                    values = np.asarray(point[key], dtype=float)
                    ok = values[np.isfinite(values)]
                    if ok.size:
                        d.append(point["d"])
                        mean.append(ok.mean())
                        err.append(ok.std(ddof=1) if ok.size > 1 else 0.0)
                    if ok.size < values.size and key == "times":
                        trapped.append(point["d"])
                ax.errorbar(d, mean, yerr=err, fmt=marker, ms=MARKER_SIZE + 1.5,
                            lw=ERRORBAR_WIDTH, color=colour, label=f"{param}, {link} SGD")
                if trapped:
                    ax.plot(trapped, [horizon[param]] * len(trapped), marker, mfc="none",
                            color=colour, ms=MARKER_SIZE + 2.5)
                flow_key = "flow_" + key
                if all(flow_key in point for point in group):
                    flow_d = [p["d"] for p in group]
                    flow_mean = [np.nanmean(p[flow_key]) if np.any(np.isfinite(p[flow_key]))
                                 else np.nan for p in group]
                    ax.plot(flow_d, flow_mean, color=colour, lw=LINE_WIDTH,
                            ls="-" if param == "tied" else "--",
                            label=f"{param}, {link} flow")
        for (param, link) in dict.fromkeys((p["param"], p["link"]) for p in flow_trend or []):
            group = sorted((p for p in flow_trend if (p["param"], p["link"]) == (param, link)),
                           key=lambda p: p["d"])
            colour = LINK_COLOURS.get(link, LIMIT_COLOUR)
            for ax, key in ((left, "times"), (right, "samples_scaled")):
                values = [np.asarray(p[key], dtype=float) for p in group]
                mean = [v.mean() for v in values]
                sem = [v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0 for v in values]
                ax.errorbar([p["d"] for p in group], mean, yerr=sem, fmt="D", mfc="none",
                            ms=MARKER_SIZE + 1.5, lw=ERRORBAR_WIDTH, color=colour, ls=":",
                            label=f"{param}, {link} flows ({values[0].size} starts)")
        dims = sorted({point["d"] for point in points}
                      | {point["d"] for point in flow_trend or []})
        _dimension_axes((left, right), dims)
        left.set_ylabel(r"$T_{wr}$ (ODE units)")
        right.set_ylabel(r"$N_{wr}/(d^2 \ln d)$")
        left.legend(frameon=False, fontsize=6)
        left.set_ylim(bottom=0)
        right.set_ylim(bottom=0)
    return fig
