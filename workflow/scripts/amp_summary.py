"""Rule amp_summary: AMP runs of one curve -> mean and std per alpha (CSV) + sidecar.

The science is ``aimrepro.paper1.amp.summary_table``; the runs come in the order of
the curve's alphas and seeds (Plan.figure1_amp_curves, Plan.figure2_amp_curves).
"""

from _job import run_job, runs_per_alpha

from aimrepro.paper1.amp import load_run_summary, summary_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        curve = smk.params.curve
        runs = runs_per_alpha(smk.input.runs, curve, load_run_summary)
        table = summary_table(curve["channel"], curve["T"], curve["rho"], curve["alphas"], runs,
                              beta=curve["beta"])
        write_table(smk.output.table, table)
        n_runs = int(table["n_runs"].sum())
        n_converged = int(table["n_converged"].sum())
        job.log.info("%d runs, %d converged", n_runs, n_converged)
        job.write_sidecar(smk.output.table, diagnostics={
            "converged": n_converged == n_runs, "n_runs": n_runs, "n_converged": n_converged,
            "n_diverged": int(table["n_diverged"].sum()),
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
