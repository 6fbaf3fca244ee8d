"""Rule claims_paper1_hardmax_tokens_amp: GAMP-RIE at T >= 3 against the tabulated SE -> TSV fragment + sidecar.

Reads the runs of rule tokens_amp_run and the Fisher table of their T (refitted);
the measurement is ``aimrepro.claims.paper1_hardmax_tokens_amp.amp_trend_row``.
"""

from _job import run_job

from aimrepro.claims.paper1_hardmax_tokens_amp import amp_trend_row
from aimrepro.paper1.amp import load_run_summary
from aimrepro.paper1.hardmax_tokens import FisherTable, fit_fisher_table, solve_se
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        table = smk.params.table
        fit = fit_fisher_table(FisherTable.from_columns(read_table(smk.input.table), T=table["T"],
                                                        seed=table["seed"]), table["degree"])
        runs = list(smk.params.runs)
        se_point = solve_se(fit, runs[0]["alpha"], runs[0]["rho"])
        summaries = [{"d": run["d"], **load_run_summary(path)} for run, path in zip(runs, smk.input.runs)]
        job.write_claims([amp_trend_row(summaries, se_point)], "hardmax T >= 3 AMP")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
