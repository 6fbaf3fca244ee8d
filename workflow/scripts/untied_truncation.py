"""Rule untied_truncation: the untied truncations and the slaved slow flow of n replicates -> CSV + sidecar.

[P Cor. 8] at finite d (``aimrepro.paper2.untied.truncation_table.truncation_error_table``).
"""

import numpy as np
from _job import run_job
from _replicates import replicate_seeds, write_replicate_table

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.untied.truncation_table import truncation_error_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec("untied", wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           student_rho=float(wc.rho), normalisation=wc.normalisation,
                           init_scale=float(wc.sU), init_scale_v=float(wc.sV),
                           teacher_mean=float(wc.m2))
        seeds = replicate_seeds(wc)
        times = np.linspace(0.0, float(wc.horizon), int(wc.records))
        table, diagnostics = truncation_error_table(spec, seeds, times, max_order=int(wc.M))
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
