"""Rule claims_paper1_amp: paper 1's AMP claims as measured numbers -> TSV fragment + sidecar.

Reads the AMP summaries and the runs of the finite-size trends; the measurements are ``aimrepro.claims.paper1_amp.paper1_amp_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_amp import AMPInputs, paper1_amp_claims
from aimrepro.paper1.amp import load_run_summary
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = list(smk.params.curves)
        trends = list(smk.params.trends)
        trend_runs = [[[load_run_summary(run) for run in point["runs"]] for point in trend["points"]]
                      for trend in trends]
        rows = paper1_amp_claims(AMPInputs(curves, [read_table(c["path"]) for c in curves],
                                           trends=trends, trend_runs=trend_runs))
        job.write_claims(rows, "AMP")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
