"""Rule theorem1: finite-d population loss against Phi(q) at one d -> CSV row + sidecar.

The science is ``aimrepro.paper2.experiments.theorem1_table``.
"""

import time

from _job import run_job

from aimrepro.paper2.experiments import theorem1_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        links = wc.links.split("-")
        cpu_start = time.process_time()
        columns, diagnostics = theorem1_table(links, T=int(wc.T), d=int(wc.d),
                                              rho=float(wc.rho), beta=float(wc.beta),
                                              n_samples=int(wc.n), seed=int(wc.seed))
        diagnostics["cpu_seconds"] = time.process_time() - cpu_start
        write_table(smk.output.table, columns)
        job.log.info("row %s", {k: float(v[0]) for k, v in columns.items()})
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
