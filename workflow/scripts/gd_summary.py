"""Rule gd_summary: GD runs of one T -> mean and std per alpha (CSV) + sidecar.

The science is ``aimrepro.paper1.gd.summary_table``; the runs come in the order of
the curve's alphas and seeds (Plan.figure2_gd_curves).
"""

from _job import run_job, runs_per_alpha

from aimrepro.paper1.gd import load_run_summary, summary_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        curve = smk.params.curve
        runs = runs_per_alpha(smk.input.runs, curve, load_run_summary)
        table = summary_table(curve["T"], curve["rho"], curve["alphas"], runs, beta=curve["beta"])
        write_table(smk.output.table, table)
        n_runs = int(table["n_runs"].sum())
        n_clean = int(table["n_clean"].sum())
        n_diverged = int(table["n_diverged"].sum())
        job.log.info("%d runs, %d with every student finished, %d students diverged", n_runs, n_clean, n_diverged)
        job.write_sidecar(smk.output.table, diagnostics={
            "converged": n_diverged == 0, "n_runs": n_runs, "n_clean": n_clean, "n_diverged": n_diverged,
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
