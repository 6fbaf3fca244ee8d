"""Rule claims_paper2_dynamics: paper 2's landscape and weak-recovery claims -> TSV fragment + sidecar.

The measurements are ``aimrepro.claims.paper2_dynamics.paper2_dynamics_claims``.
"""

from _job import run_job

from aimrepro.claims.paper2_dynamics import paper2_dynamics_claims
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import predicted_loss_rate, read_flow_ensemble, split_by_d
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.tables import read_table


def _load(runs, key, path="path"):
    groups = {}
    for run in runs:
        groups.setdefault(key(run), []).append(
            Trajectory.from_columns(read_table(run[path]), run["d"]))
    return groups


def _ensembles(plans, key):
    """{key(plan): [Trajectory per seed, in seed order]} of planned flow ensembles."""
    out = {}
    for plan in plans:
        flows = read_flow_ensemble(read_table(plan["path"]), plan["d"])
        out[key(plan)] = [flows[seed] for seed in plan["seeds"]]
    return out


def _key(plan):
    return plan.get("flow", plan.get("param")), plan["link"], plan["d"]


def _spec(plan) -> ProblemSpec:
    """The problem of a flow ensemble or an SGD run of tied or direct attention."""
    return ProblemSpec(_key(plan)[0], plan["link"], plan["T"], plan["d"], rho=plan["rho"],
                       normalisation=plan["normalisation"])


def main(smk) -> None:
    with run_job(smk) as job:
        p = smk.params
        theorem1 = [{name: float(col[0]) for name, col in read_table(path).items()}
                    for path in smk.input.theorem1]
        figure2 = _load(p.figure2, lambda r: (r["param"], r["link"]))
        figure2_flows = _load(p.figure2, lambda r: (r["param"], r["link"]), path="flow_path")

        def scan_key(run):
            return run["param"], run["link"], run["d"]

        scan = _load(p.figureS3, scan_key)
        scan_flows = _load(p.figureS3, scan_key, path="flow_path")
        follow = _load(p.follow, scan_key)
        follow_flows = _load(p.follow, scan_key, path="flow_path")
        horizon = {run["param"]: run["horizon"] for run in p.figureS3}
        velocity = {(t["link"], d): table for t in p.velocity
                    for d, table in split_by_d(read_table(t["path"])).items()}
        rows = paper2_dynamics_claims(
            theorem1=theorem1, theorem1_links=p.theorem1_links, figure2=figure2, scan=scan,
            scan_flows=scan_flows, follow=follow, follow_flows=follow_flows, threshold=p.threshold, eta=p.eta, horizon=horizon,
            figure2_flows=figure2_flows,
            figure2_ensembles=_ensembles(p.figure2_ensembles,
                                         lambda e: (e["flow"], e["link"], e["d"])),
            s3_ensembles=_ensembles(p.s3_ensembles, lambda e: (e["flow"], e["link"], e["d"])),
            velocity=velocity, samples=p.figure2[0]["samples"] if p.figure2 else None,
            strong=_ensembles(p.strong, _key),
            strong_predicted={_key(e): [predicted_loss_rate(_spec(e), seed) for seed in e["seeds"]]
                              for e in p.strong},
            strong_sgd={key: _load([r for r in p.strong_sgd if _key(r) == key], lambda r: r["lr"])
                        for key in {_key(r) for r in p.strong_sgd}},
            strong_sgd_predicted={key: [predicted_loss_rate(_spec(r), r["seed"]) for r in p.strong_sgd
                                        if _key(r) == key]
                                  for key in {_key(r) for r in p.strong_sgd}})
        job.write_claims(rows, "paper-2 dynamics")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
