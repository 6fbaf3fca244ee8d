"""Rule claims_paper2_token_laws: SGD on tokens that are not Gaussian against both flows -> TSV fragment + sidecar.

Reads the summaries of rule token_law_sgd; the rows are
``aimrepro.claims.paper2_token_laws.paper2_token_laws_claims``.
"""

from _job import run_job

from aimrepro.claims.paper2_token_laws import paper2_token_laws_claims
from aimrepro.paper2.token_law_runs import load_law_replicates


def main(smk) -> None:
    with run_job(smk) as job:
        runs = {(r["param"], r["link"], r["law"], int(r["d"])): load_law_replicates(r["path"], r["d"])[0]
                for r in smk.params.runs}
        job.write_claims(paper2_token_laws_claims(runs, threshold=float(smk.params.threshold)),
                         "paper 2 token-law")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
