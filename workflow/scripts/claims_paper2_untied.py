"""Rule claims_paper2_untied: paper 2's untied-attention claims -> TSV fragment + sidecar.

Reads the rule's inputs into one :class:`aimrepro.claims.paper2_untied.UntiedInputs`;
the measurements are ``aimrepro.claims.paper2_untied.paper2_untied_claims``.
"""

from _job import run_job
from _untied_tables import load_groups

from aimrepro.claims.paper2_untied import (Collapse, Dichotomy, Plateau, ReplicateTable, UntiedInputs,
                                           paper2_untied_claims)
from aimrepro.paper2.theory_tables import split_by_d
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.tables import read_table


def _run(run) -> Trajectory:
    return Trajectory.from_columns(read_table(run["path"]), run["d"])


def _by_lr(runs) -> dict:
    """{lr: {seed: SGD run}} of one case's runs."""
    out = {}
    for run in runs:
        out.setdefault(run["lr"], {})[run["seed"]] = _run(run)
    return out


def main(smk) -> None:
    with run_job(smk) as job:
        p = smk.params

        def s5_key(run):
            return run["teacher_mean"], run["d"]

        s4, s5 = p.figureS4[0], p.figureS5[0]
        inputs = UntiedInputs(
            figure3=load_groups(p.figure3, lambda r: r["link"]),
            collapse=Collapse(
                runs=load_groups(p.figureS4, lambda r: r["d"]),
                flows=load_groups(p.figureS4, lambda r: r["d"], path="flow_path"),
                limits=[t for g in load_groups(p.figureS4_limits, lambda r: r["d"],
                                               path="limit_path").values() for t in g],
                link=s4["link"], fast_horizon=s4["fast_horizon"], horizon=s4["horizon"],
                teacher_mean=s4["teacher_mean"]),
            dichotomy=Dichotomy(
                runs=load_groups(p.figureS5, s5_key),
                flows=load_groups(p.figureS5, s5_key, path="flow_path"),
                fast_states=read_table(smk.input.fast_states), link=s5["link"], horizon=s5["horizon"],
                fast_horizon=s5["fast_horizon"]),
            threshold=p.threshold,
            velocity={(t["link"], t["teacher_mean"], d): table for t in p.velocity
                      for d, table in split_by_d(read_table(t["path"])).items()},
            plateau=Plateau(load_groups(p.plateau, lambda r: r["d"]), p.plateau[0]["link"],
                            p.plateau[0]["start"]) if p.plateau else None,
            truncations=[ReplicateTable(case, read_table(case["path"]),
                                        {run["seed"]: _run(run) for run in case["sgd_runs"]})
                         for case in p.truncations],
            decay=[ReplicateTable(case, read_table(case["path"]), _by_lr(case["sgd_runs"]))
                   for case in p.decay])
        job.write_claims(paper2_untied_claims(inputs), "paper-2 untied")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
