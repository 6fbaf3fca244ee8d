"""Rule token_law_se_curve: the SE with one token law's diagonal variance along an alpha grid -> CSV + sidecar.

The science is ``aimrepro.paper1.token_laws.law_se_curve`` (docs/paper1.md §13.2; Gaussian
tokens give the papers' SE).
"""

from _job import run_job

from aimrepro.model import TokenLaw
from aimrepro.numerics.grids import grid_values
from aimrepro.paper1.token_laws import law_se_curve
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        alphas = grid_values(wc.spacing, float(wc.lo), float(wc.hi), int(wc.n))
        curve = law_se_curve(wc.channel, int(wc.T), float(wc.rho), alphas, TokenLaw.parse(wc.law))
        write_table(smk.output.table, curve)
        n_unconverged = int((~curve["converged"]).sum())
        diagnostics = {"converged": n_unconverged == 0, "n_unconverged_points": n_unconverged}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics,
                          extra_params={"law": TokenLaw.parse(wc.law).to_dict()})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
