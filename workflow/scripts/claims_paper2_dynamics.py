"""Rule claims_paper2_dynamics: paper 2's landscape and weak-recovery claims -> TSV fragment + sidecar.

Reads the rule's inputs into one :class:`aimrepro.claims.paper2_dynamics.DynamicsInputs`;
the measurements (and the predicted rates they are judged against) are
``aimrepro.claims.paper2_dynamics.paper2_dynamics_claims``.
"""

from _job import run_job

from aimrepro.claims.paper2_dynamics import DynamicsInputs, Replicates, paper2_dynamics_claims
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import read_flow_ensemble, split_by_d
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


def _problem(plan) -> ProblemSpec:
    """The problem of a flow ensemble or an SGD run of tied or direct attention."""
    return ProblemSpec(_key(plan)[0], plan["link"], plan["T"], plan["d"], rho=plan["rho"],
                       normalisation=plan["normalisation"])


def _strong_sgd(runs) -> dict:
    """{(param, link, d): {lr: Replicates}} of the late-time SGD runs, in planned order."""
    out = {}
    for run in runs:
        out.setdefault(_key(run), {}).setdefault(run["lr"], []).append(run)
    return {key: {lr: Replicates(_problem(group[0]), [run["seed"] for run in group],
                                 [Trajectory.from_columns(read_table(run["path"]), run["d"]) for run in group])
                  for lr, group in by_lr.items()} for key, by_lr in out.items()}


def main(smk) -> None:
    with run_job(smk) as job:
        p = smk.params

        def scan_key(run):
            return run["param"], run["link"], run["d"]

        def pair(run):
            return run["param"], run["link"]

        def flow_key(plan):
            return plan["flow"], plan["link"], plan["d"]

        strong = _ensembles(p.strong, _key)
        inputs = DynamicsInputs(
            theorem1=[{name: float(col[0]) for name, col in read_table(path).items()}
                      for path in smk.input.theorem1],
            theorem1_links=p.theorem1_links,
            figure2=_load(p.figure2, pair), figure2_flows=_load(p.figure2, pair, path="flow_path"),
            scan=_load(p.figureS3, scan_key), scan_flows=_load(p.figureS3, scan_key, path="flow_path"),
            follow=_load(p.follow, scan_key), follow_flows=_load(p.follow, scan_key, path="flow_path"),
            threshold=p.threshold, eta=p.eta, horizon={run["param"]: run["horizon"] for run in p.figureS3},
            figure2_ensembles=_ensembles(p.figure2_ensembles, flow_key),
            s3_ensembles=_ensembles(p.s3_ensembles, flow_key),
            velocity={(t["link"], d): table for t in p.velocity
                      for d, table in split_by_d(read_table(t["path"])).items()},
            samples=p.figure2[0]["samples"] if p.figure2 else None,
            strong={_key(e): Replicates(_problem(e), e["seeds"], strong[_key(e)]) for e in p.strong},
            strong_sgd=_strong_sgd(p.strong_sgd))
        job.write_claims(paper2_dynamics_claims(inputs), "paper-2 dynamics")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
