"""Rule landscape: Phi over a (q11, q12) grid for one link -> CSV table + sidecar.

The science is ``aimrepro.paper2.experiments.landscape_table``.
"""

from _job import run_job

from aimrepro.paper2.experiments import landscape_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        columns, diagnostics = landscape_table(wc.link, T=int(wc.T), rho=float(wc.rho),
                                               beta=float(wc.beta), n_grid=int(wc.n))
        write_table(smk.output.table, columns)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
