"""Rule untied_velocity: dq12/dtau after the fast phase of n untied replicates -> CSV + sidecar.

[P eq. 42] against the slaved slow flow at each replicate's U(0), V(0)
(``aimrepro.paper2.theory_tables.untied_velocity_table``).
"""

from dataclasses import asdict

from _job import run_job

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import over_dims, untied_velocity_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        dims = [int(d) for d in wc.dims.split("-")]
        spec = ProblemSpec("untied", wc.link, int(wc.T), dims[0], rho=float(wc.rho),
                           student_rho=float(wc.rho), normalisation=wc.normalisation,
                           init_scale=float(wc.sU), init_scale_v=float(wc.sV),
                           teacher_mean=float(wc.m2))
        seeds = range(int(wc.seed), int(wc.seed) + int(wc.n))
        table, diagnostics = over_dims(untied_velocity_table, spec, dims, seeds)
        write_table(smk.output.table, table)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec), "seeds": list(seeds)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
