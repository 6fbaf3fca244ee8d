"""Rule untied_truncation: the untied truncations and the slaved slow flow of n replicates -> CSV + sidecar.

[P Cor. 8] at finite d (``aimrepro.paper2.untied.truncation_table.truncation_error_table``).
"""

import numpy as np
from _job import run_job
from _replicates import replicate_seeds, write_replicate_table
from _untied_wildcards import replicate_untied_spec

from aimrepro.paper2.untied.truncation_table import truncation_error_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = replicate_untied_spec(wc, wc.d)
        seeds = replicate_seeds(wc)
        times = np.linspace(0.0, float(wc.horizon), int(wc.records))
        table, diagnostics = truncation_error_table(spec, seeds, times, max_order=int(wc.M))
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
