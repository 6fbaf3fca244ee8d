"""Rule claims_paper1_hardmax_tokens: hardmax with T >= 3 tokens, claims as measured numbers -> TSV + sidecar.

Reads the tabulated SE curves, the exact T = 2 curves and the Fisher tables
(refitted: the fit is deterministic); the measurements are
``aimrepro.claims.paper1_hardmax_tokens.hardmax_tokens_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_hardmax_tokens import TokensInputs, hardmax_tokens_claims
from aimrepro.paper1.hardmax_tokens import FisherTable, fit_fisher_table
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = [{"T": c["T"], "rho": c["rho"], "columns": read_table(c["path"])}
                  for c in smk.params.curves]
        exact = {c["rho"]: read_table(c["path"]) for c in smk.params.exact}
        fits = {t["T"]: fit_fisher_table(FisherTable.from_columns(read_table(t["path"]), T=t["T"],
                                                                  seed=t["seed"]), t["degree"])
                for t in smk.params.tables}
        rows = hardmax_tokens_claims(TokensInputs(curves=curves, exact=exact, fits=fits,
                                                  rhos=list(smk.params.rhos),
                                                  uniqueness_alphas=list(smk.params.uniqueness_alphas)))
        job.write_claims(rows, "hardmax T >= 3")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
