"""Rule tied_velocity: dp12/dt at W(0) of n tied replicates -> CSV table + sidecar.

[P eq. 17], the Gaussian-equivalent matrix flow ([P eq. 356]) and the exact
finite-d SGD drift (``aimrepro.paper2.theory_tables.tied_velocity_table``).
"""

from _job import run_job
from _replicates import replicate_dims, replicate_seeds, write_replicate_table

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import over_dims, tied_velocity_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        dims = replicate_dims(wc)
        spec = ProblemSpec("tied", wc.link, int(wc.T), dims[0], rho=float(wc.rho),
                           normalisation=wc.normalisation)
        seeds = replicate_seeds(wc)
        table, diagnostics = over_dims(tied_velocity_table, spec, dims, seeds)
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
