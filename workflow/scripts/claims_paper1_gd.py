"""Rule claims_paper1_gd: paper 1's GD claims as measured numbers -> TSV fragment + sidecar.

Reads the GD summaries and the runs of the finite-size trend (GD, and AMP on the same datasets); the measurements are ``aimrepro.claims.paper1_gd.paper1_gd_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_gd import GDInputs, paper1_gd_claims
from aimrepro.paper1 import amp
from aimrepro.paper1.gd import load_run_summary
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = list(smk.params.curves)
        trend = smk.params.trend
        points = trend["points"] if trend else []
        trend_runs = [[load_run_summary(run) for run in point["runs"]] for point in points]
        trend_amp_runs = [[amp.load_run_summary(run) for run in point["amp_runs"]] for point in points]
        rows = paper1_gd_claims(GDInputs(curves, [read_table(c["path"]) for c in curves], trend=trend,
                                         trend_runs=trend_runs if trend else None,
                                         trend_amp_runs=trend_amp_runs if trend else None))
        job.write_claims(rows, "GD")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
