"""Our figure (beyond paper 2): weak recovery with tokens that are not Gaussian (``docs/paper2.md`` §10).

Figure S3's problem (one token, h₂, per-sample rate η/(d ln d)) at one d:
left tied W, right direct S.  Per law, the overlap |p12|/p22 of each SGD
replicate (thin solid lines, measured) and the flow of the law's population
loss from the same initial state (dashed, our theory); in black dotted the
Gaussian population flow (the paper's theory) of the same replicates; the
grey line is the weak-recovery threshold.  A run that blew up or ran away
(``analysis.runaway_time``) is drawn up to there and ends in a cross.  Time is
logarithmic, from the first record after t = 0: the laws' escape times span
two decades (sparse tokens cross near 0.2, trapped ones near 5-10), and the
Student-t runs, which blow up within a few steps, stand apart as crosses
instead of in the axes' corner.  Runs and flows end at the stop overlap 0.5
(or at the horizon when they do not reach it).  Drawing only: the
trajectories come from the workflow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from aimrepro.figures.paper1_token_laws import law_colour, law_label
from aimrepro.figures.style import LIMIT_COLOUR, annotate_unconverged, figure_style, new_figure
from aimrepro.model import TokenLaw
from aimrepro.paper2.analysis import runaway_time
from aimrepro.paper2.trajectory import Trajectory

__all__ = ["PARAMS", "draw_token_laws_dynamics"]

#: Panels, left to right.
PARAMS = ("tied", "direct")


def _overlap(run: Trajectory) -> np.ndarray:
    return np.abs(run.overlap_ratio)


def _after_zero(run: Trajectory, keep: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Times and overlaps of the records after t = 0 (and in ``keep``): what a log time axis can show."""
    mask = run.t_ode > 0 if keep is None else keep & (run.t_ode > 0)
    return run.t_ode[mask], _overlap(run)[mask]


def draw_token_laws_dynamics(sgd: Mapping[tuple[str, str], Sequence[Trajectory]],
                             law_flows: Mapping[tuple[str, str], Sequence[Trajectory]],
                             gaussian_flows: Mapping[str, Sequence[Trajectory]], *, dims: Mapping[str, int],
                             threshold: float) -> Figure:
    """Draw the figure (module notes).

    Parameters
    ----------
    sgd : {(param, law token): SGD replicates at ``d``} (Gaussian tokens may be among them)
    law_flows : {(param, law token): the law's flows from the same initial states}
    gaussian_flows : {param: the Gaussian flows of the same replicates}
    dims : {param: the dimension(s) drawn, as written in the titles}; threshold : |p12|/p22 of weak recovery
    """
    with figure_style():
        fig, axes = new_figure()
        notes, laws = [], []
        for ax, param in zip(axes, PARAMS):
            horizon, first_record, blowups = 0.0, np.inf, []
            for flow in gaussian_flows.get(param, ()):
                ax.plot(*_after_zero(flow), color=LIMIT_COLOUR, linestyle=":", linewidth=0.9)
                horizon = max(horizon, float(flow.t_ode[-1]))
            for (p, token), runs in sorted(sgd.items()):
                if p != param:
                    continue
                laws.append(token)
                colour = law_colour(token)
                blown = 0
                for run in runs:
                    away = runaway_time(run)
                    keep = run.t_ode < away if np.isfinite(away) else np.ones(len(run), dtype=bool)
                    if keep.any():
                        ax.plot(*_after_zero(run, keep), color=colour, linewidth=0.6, alpha=0.8)
                        horizon = max(horizon, float(run.t_ode[keep][-1]))
                    positive = run.t_ode[run.t_ode > 0]
                    first_record = min(first_record, float(positive[0])) if positive.size else first_record
                    if np.isfinite(away):
                        blown += 1
                        blowups.append(float(away))
                        last = min(1.0, _overlap(run)[keep][-1]) if keep.any() else 0.0
                        ax.plot([away], [last], marker="x", color=colour, markersize=4, linestyle="none")
                if blown:
                    notes.append(f"{param} {law_label(token)}: {blown}/{len(runs)}")
                for flow in law_flows.get((param, token), ()):
                    if not TokenLaw.parse(token).is_gaussian:
                        ax.plot(*_after_zero(flow), color=colour, linestyle="--", linewidth=0.9)
                        horizon = max(horizon, float(flow.t_ode[-1]) if len(flow) else 0.0)
            ax.axhline(threshold, color="0.6", linewidth=0.6)
            xlabel = "t = αn/d" if param == "direct" else "t = 4αn/d"
            earliest = min([first_record, *(t for t in blowups if t > 0)])
            ax.set_xscale("log")
            if np.isfinite(earliest) and horizon > earliest:
                ax.set_xlim(0.5 * earliest, horizon)
            ax.set_xlabel(f"{xlabel} (log scale)")
            ax.set(ylim=(0.0, 1.05), title=f"{param}, h2, one token, d = {dims.get(param, '?')}")
        axes[0].set_ylabel(r"overlap $|p_{12}|/p_{22}$")
        handles = [Line2D([], [], color=law_colour(t), label=law_label(t)) for t in dict.fromkeys(laws)]
        handles += [Line2D([], [], color="0.3", linewidth=0.6, label="SGD (measured)"),
                    Line2D([], [], color="0.3", linestyle="--", label="flow of the law's loss (ours)"),
                    Line2D([], [], color=LIMIT_COLOUR, linestyle=":", label="Gaussian flow (paper's theory)")]
        axes[1].legend(handles=handles, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False, fontsize=6)
        # one short line: a note per law would overflow the figure's width
        annotate_unconverged(fig, 0, extra=["SGD runs that blew up or ran away (×): " + "; ".join(notes)]
                             if notes else ())
    return fig
