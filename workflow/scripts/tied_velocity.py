"""Rule tied_velocity: dp12/dt at W(0) of n tied replicates -> CSV table + sidecar.

[P eq. 17], the Gaussian-equivalent matrix flow ([P eq. 356]) and the exact
finite-d SGD drift (``aimrepro.paper2.theory_tables.tied_velocity_table``).
"""

from dataclasses import asdict

from _job import run_job

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import over_dims, tied_velocity_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        dims = [int(d) for d in wc.dims.split("-")]
        spec = ProblemSpec("tied", wc.link, int(wc.T), dims[0], rho=float(wc.rho),
                           normalisation=wc.normalisation)
        seeds = range(int(wc.seed), int(wc.seed) + int(wc.n))
        table, diagnostics = over_dims(tied_velocity_table, spec, dims, seeds)
        write_table(smk.output.table, table)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec), "seeds": list(seeds)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
