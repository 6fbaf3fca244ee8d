"""Rule claims_paper2_untied: paper 2's untied-attention claims -> TSV fragment + sidecar.

The measurements are ``aimrepro.claims.paper2_untied.paper2_untied_claims``.
"""

from _job import run_job
from _untied_tables import load_groups

from aimrepro.claims.paper2_untied import paper2_untied_claims
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
        velocity = {(t["link"], t["teacher_mean"], d): table for t in p.velocity
                    for d, table in split_by_d(read_table(t["path"])).items()}
        plateau = load_groups(p.plateau, lambda r: r["d"]) if p.plateau else None
        rows = paper2_untied_claims(
            figure3=load_groups(p.figure3, lambda r: r["link"]),
            figureS4=load_groups(p.figureS4, lambda r: r["d"]),
            figureS4_flows=load_groups(p.figureS4, lambda r: r["d"], path="flow_path"),
            figureS4_limits=[t for g in load_groups(p.figureS4_limits, lambda r: r["d"],
                                                    path="limit_path").values() for t in g],
            s4_link=s4["link"], s4_fast_horizon=s4["fast_horizon"], s4_horizon=s4["horizon"],
            s4_teacher_mean=s4["teacher_mean"],
            figureS5=load_groups(p.figureS5, s5_key),
            figureS5_flows=load_groups(p.figureS5, s5_key, path="flow_path"),
            fast_states=read_table(smk.input.fast_states), s5_link=s5["link"],
            s5_horizon=s5["horizon"], s5_fast_horizon=s5["fast_horizon"],
            threshold=p.threshold, velocity=velocity, plateau=plateau,
            plateau_link=p.plateau[0]["link"] if p.plateau else None,
            plateau_start=p.plateau[0]["start"] if p.plateau else None,
            truncations=[(case, read_table(case["path"])) for case in p.truncations],
            truncation_sgd=[{run["seed"]: _run(run) for run in case["sgd_runs"]}
                            for case in p.truncations],
            decay=[(case, read_table(case["path"])) for case in p.decay],
            decay_sgd=[_by_lr(case["sgd_runs"]) for case in p.decay])
        job.write_claims(rows, "paper-2 untied")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
