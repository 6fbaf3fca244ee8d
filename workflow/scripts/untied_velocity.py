"""Rule untied_velocity: dq12/dtau after the fast phase of n untied replicates -> CSV + sidecar.

[P eq. 42] against the slaved slow flow at each replicate's U(0), V(0)
(``aimrepro.paper2.theory_tables.untied_velocity_table``).
"""

from _job import run_job
from _replicates import replicate_dims, replicate_seeds, write_replicate_table
from _untied_wildcards import replicate_untied_spec

from aimrepro.paper2.theory_tables import over_dims, untied_velocity_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        dims = replicate_dims(wc)
        spec = replicate_untied_spec(wc, dims[0])
        seeds = replicate_seeds(wc)
        table, diagnostics = over_dims(untied_velocity_table, spec, dims, seeds)
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
