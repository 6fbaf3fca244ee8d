"""Rule moment_truncations: the truncated hierarchy at every order -> CSV long table + sidecar.

Wildcards name the problem (its kind, KINDS["moment_truncations"] in
aimrepro_workflow.kinds.paper2, paper2_moments.smk); the science is
``aimrepro.paper2.moment_experiments.truncation_table``.
"""

import numpy as np
from _job import run_job

from aimrepro.paper2.moment_experiments import truncation_table
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec("tied", wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation, loss_prefactor=float(wc.c))
        times = np.linspace(0.0, float(wc.horizon), int(wc.records))
        orders = [int(m) for m in wc.orders.split("-")]
        columns, diagnostics = truncation_table(spec, int(wc.seed), times, orders,
                                                weight_decay=float(wc.wd))
        write_table(smk.output.table, columns)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
