"""Rule claims_paper2_dynamics: paper 2's landscape and weak-recovery claims -> TSV fragment + sidecar.

The measurements are ``aimrepro.claims.paper2_dynamics.paper2_dynamics_claims``.
"""

from _job import run_job

from aimrepro.claims.paper2_dynamics import paper2_dynamics_claims
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.records.tables import read_table


def _load(runs, key, path="path"):
    groups = {}
    for run in runs:
        groups.setdefault(key(run), []).append(
            Trajectory.from_columns(read_table(run[path]), run["d"]))
    return groups


def main(smk) -> None:
    with run_job(smk) as job:
        theorem1 = [{name: float(col[0]) for name, col in read_table(path).items()}
                    for path in smk.input.theorem1]
        figure2 = _load(smk.params.figure2, lambda r: (r["param"], r["link"]))
        def scan_key(run):
            return run["param"], run["link"], run["d"]

        scan = _load(smk.params.figureS3, scan_key)
        scan_flows = _load(smk.params.figureS3, scan_key, path="flow_path")
        first = smk.params.figure2[0]
        horizon = {run["param"]: run["horizon"] for run in smk.params.figureS3}
        rows = paper2_dynamics_claims(theorem1=theorem1, theorem1_links=smk.params.theorem1_links,
                                      figure2=figure2, scan=scan, scan_flows=scan_flows,
                                      threshold=smk.params.threshold, eta=smk.params.eta,
                                      T=first["T"], d=first["d"], horizon=horizon)
        job.write_claims(rows, "paper-2 dynamics")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
