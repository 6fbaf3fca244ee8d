"""Rule truncation_radius: the radius of convergence of the linear-case truncations -> CSV + sidecar.

At the initial W and S* (scaled by ``s``) of n replicates
(``aimrepro.paper2.theory_tables.radius_table``).
"""

from dataclasses import asdict

from _job import run_job

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import radius_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec("tied", "linear", 1, int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation, loss_prefactor=float(wc.c))
        seeds = range(int(wc.seed), int(wc.seed) + int(wc.n))
        table, diagnostics = radius_table(spec, seeds, weight_decay=float(wc.wd),
                                          matrix_scale=float(wc.s))
        write_table(smk.output.table, table)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec), "seeds": list(seeds)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
