"""Rule claims_paper1_gd: paper 1's GD claims as measured numbers -> TSV fragment + sidecar.

Reads the GD summaries and the runs of the finite-size trend; the measurements are ``aimrepro.claims.paper1_gd.paper1_gd_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_gd import paper1_gd_claims
from aimrepro.paper1.gd import load_run_summary
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = list(smk.params.curves)
        trend = smk.params.trend
        trend_runs = ([[load_run_summary(run) for run in point["runs"]] for point in trend["points"]]
                      if trend else None)
        rows = paper1_gd_claims(curves, [read_table(c["path"]) for c in curves],
                                trend=trend, trend_runs=trend_runs)
        job.write_claims(rows, "GD")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
