"""Rule truncation_error: truncation errors of orders 2..M at one weight decay -> CSV + sidecar.

Times: 0 and ``records`` log-spaced points from t_min to the horizon.  The
science is ``aimrepro.paper2.moment_experiments.truncation_error_table``.
"""

import numpy as np
from _job import run_job

from aimrepro.paper2.moment_experiments import truncation_error_table
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec("tied", "linear", 1, int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation, loss_prefactor=float(wc.c))
        times = np.concatenate([[0.0], np.geomspace(float(wc.tmin), float(wc.horizon),
                                                    int(wc.records))])
        columns, diagnostics = truncation_error_table(spec, int(wc.seed), times, int(wc.M),
                                                      weight_decay=float(wc.wd),
                                                      matrix_scale=float(wc.s))
        write_table(smk.output.table, columns)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
