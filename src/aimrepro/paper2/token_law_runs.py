"""The replicates of one token-law problem of paper 2, in one call (``docs/paper2.md`` §10).

Per replicate seed: online SGD on the law's tokens, the Gaussian population
flow and the flow of the law's population loss, both from the run's initial
state (:func:`aimrepro.paper2.flows.reference_flow`), and the summary the
claims read (:func:`aimrepro.paper2.analysis.law_run_summary`).  One call per
(parametrisation, law, d) keeps the number of jobs of a trend small; the
trajectories are returned for the figure.

Cost per replicate: the SGD run (O(B T d r) per step, tied; O(B T d²), direct)
and two flows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from aimrepro.model import GAUSSIAN
from aimrepro.paper2.analysis import law_run_summary
from aimrepro.paper2.flows import reference_flow
from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings
from aimrepro.paper2.trajectory import Trajectory

__all__ = ["law_replicates"]


def law_replicates(spec: ProblemSpec, settings: SGDSettings, seeds: Sequence[int], *, threshold: float,
                   times=None) -> tuple[list[dict], dict[int, tuple[Trajectory, Trajectory, Trajectory]]]:
    """SGD, Gaussian flow and law flow of each replicate of ``spec`` (its ``tokens`` is the law).

    Parameters
    ----------
    spec : the problem, with ``spec.tokens`` the law (the Gaussian law gives SGD and the Gaussian flow twice)
    settings : SGD settings (step size, batch, horizon, records, stop)
    seeds : replicate seeds (``sgd.initial_problem``)
    threshold : weak recovery, |p12|/p22
    times : the flows' record times (default: ``settings.n_records`` uniform times up to the horizon)

    Returns
    -------
    summaries : one ``analysis.law_run_summary`` dict per seed
    trajectories : {seed: (SGD run, Gaussian flow, law flow)}
    """
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError(f"seeds must be distinct integers >= 0, at least one, got {seeds}")
    times = np.linspace(0.0, settings.horizon, settings.n_records) if times is None else times
    summaries, trajectories = [], {}
    for seed in seeds:
        run = SGDRun(spec, settings, seed).run()
        gaussian = reference_flow(replace(spec, tokens=GAUSSIAN), seed, times)
        law = gaussian if spec.tokens.is_gaussian else reference_flow(spec, seed, times)
        summaries.append(law_run_summary(seed, run, gaussian, law, threshold))
        trajectories[seed] = (run, gaussian, law)
    return summaries, trajectories
