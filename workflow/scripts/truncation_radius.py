"""Rule truncation_radius: the radius of convergence of the linear-case truncations -> CSV + sidecar.

At the initial W and S* (scaled by ``s``) of n replicates
(``aimrepro.paper2.theory_tables.radius_table``).
"""

from _job import run_job
from _replicates import replicate_seeds, write_replicate_table

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import radius_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec("tied", "linear", 1, int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation, loss_prefactor=float(wc.c))
        seeds = replicate_seeds(wc)
        table, diagnostics = radius_table(spec, seeds, weight_decay=float(wc.wd),
                                          matrix_scale=float(wc.s))
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
