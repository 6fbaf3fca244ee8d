"""The replicates of one token-law problem of paper 2, in one call (``docs/paper2.md`` §10).

Per replicate seed: online SGD on the law's tokens, the Gaussian population
flow and the flow of the law's population loss, both from the run's initial
state (:func:`aimrepro.paper2.flows.reference_flow`), and the summary the
claims read (:func:`aimrepro.paper2.analysis.law_run_summary`).  One call per
(parametrisation, law, d) keeps the number of jobs of a trend small; the
trajectories are returned for the figure.

Cost per replicate: the SGD run (O(B T d r) per step, tied; O(B T d²), direct)
and two flows, each ending, as SGD does, where the overlap ratio reaches the
settings' ``stop_overlap`` (or at the horizon: a trapped flow runs to it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from aimrepro.model import GAUSSIAN
from aimrepro.numerics.seeds import check_seeds
from aimrepro.paper1.data import write_npz
from aimrepro.paper2.analysis import law_run_summary
from aimrepro.paper2.flows import reference_flow
from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings
from aimrepro.paper2.trajectory import Trajectory

__all__ = ["SUMMARY_FIELDS", "law_replicates", "load_law_replicates", "save_law_replicates"]

#: The fields of one replicate's summary (``analysis.law_run_summary``), in the file's order.
SUMMARY_FIELDS = ("seed", "sgd_t_wr", "sgd_end", "blew_up", "t_blowup", "gaussian_flow_t_wr", "gaussian_flow_end",
                  "law_flow_t_wr", "law_flow_end")
#: The trajectories of one replicate, in the order :func:`law_replicates` returns them.
_ROLES = ("sgd", "gaussian_flow", "law_flow")


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
    seeds = check_seeds(seeds)
    times = np.linspace(0.0, settings.horizon, settings.n_records) if times is None else times
    summaries, trajectories = [], {}
    for seed in seeds:
        run = SGDRun(spec, settings, seed).run()
        # the flows stop where SGD does (settings.stop_overlap): past it nothing is compared or drawn
        stop = settings.stop_overlap
        gaussian = reference_flow(replace(spec, tokens=GAUSSIAN), seed, times, stop_overlap=stop)
        law = gaussian if spec.tokens.is_gaussian else reference_flow(spec, seed, times, stop_overlap=stop)
        summaries.append(law_run_summary(seed, run, gaussian, law, threshold))
        trajectories[seed] = (run, gaussian, law)
    return summaries, trajectories


def save_law_replicates(path, summaries: Sequence[dict],
                        trajectories: dict[int, tuple[Trajectory, Trajectory, Trajectory]]) -> None:
    """Write :func:`law_replicates`' output as one ``.npz``: the summaries as columns (``summary_<field>``)
    and each replicate's three trajectories as their table columns (``<role>_<seed>_<column>``)."""
    arrays = {f"summary_{name}": np.array([s[name] for s in summaries]) for name in SUMMARY_FIELDS}
    for seed, runs in trajectories.items():
        for role, run in zip(_ROLES, runs):
            arrays.update({f"{role}_{seed}_{name}": np.asarray(column) for name, column in run.columns().items()})
    write_npz(path, arrays)


def load_law_replicates(path, d: int) -> tuple[list[dict], dict[int, tuple[Trajectory, Trajectory, Trajectory]]]:
    """Inverse of :func:`save_law_replicates` (``d``: the problem's dimension, for the trajectories)."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    seeds = [int(s) for s in arrays["summary_seed"]]
    summaries = [{name: (bool(arrays[f"summary_{name}"][i]) if name == "blew_up" else
                         int(arrays[f"summary_{name}"][i]) if name == "seed" else
                         float(arrays[f"summary_{name}"][i])) for name in SUMMARY_FIELDS}
                 for i in range(len(seeds))]
    trajectories = {}
    for seed in seeds:
        runs = []
        for role in _ROLES:
            prefix = f"{role}_{seed}_"
            runs.append(Trajectory.from_columns({name[len(prefix):]: value for name, value in arrays.items()
                                                 if name.startswith(prefix)}, d))
        trajectories[seed] = tuple(runs)
    return summaries, trajectories
