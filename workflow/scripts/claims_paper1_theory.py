"""Rule claims_paper1_theory: paper 1's theory claims as measured numbers -> TSV fragment + sidecar.

The measurements are ``aimrepro.claims.paper1_theory.paper1_theory_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_theory import TheoryInputs, paper1_theory_claims


def main(smk) -> None:
    with run_job(smk) as job:
        rows = paper1_theory_claims(TheoryInputs(softmax_rhos=list(smk.params.softmax_rhos),
                                                 collapse_T_values=list(smk.params.collapse_T_values),
                                                 rho_collapse=smk.params.rho_collapse))
        job.write_claims(rows, "theory")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
