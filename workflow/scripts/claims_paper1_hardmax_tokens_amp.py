"""Rule claims_paper1_hardmax_tokens_amp: GAMP-RIE at T >= 3 against the tabulated SE -> TSV fragment + sidecar.

Reads the runs of rule tokens_amp_run and the Fisher table of their T (refitted) into one
:class:`aimrepro.claims.paper1_hardmax_tokens_amp.TokensAMPInputs`; the measurement (and the SE
it is judged against) is ``aimrepro.claims.paper1_hardmax_tokens_amp.hardmax_tokens_amp_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_hardmax_tokens_amp import TokensAMPInputs, hardmax_tokens_amp_claims
from aimrepro.paper1.amp import load_run_summary
from aimrepro.paper1.hardmax_tokens import FisherTable, fit_fisher_table
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        table = smk.params.table
        fit = fit_fisher_table(FisherTable.from_columns(read_table(smk.input.table), T=table["T"],
                                                        seed=table["seed"]), table["degree"])
        runs = [{"alpha": run["alpha"], "rho": run["rho"], "d": run["d"], **load_run_summary(path)}
                for run, path in zip(smk.params.runs, smk.input.runs)]
        job.write_claims(hardmax_tokens_amp_claims(TokensAMPInputs(runs, fit)), "hardmax T >= 3 AMP")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
