"""Rule untied_decay: the untied population flow of n replicates to late tau and its linearised decay -> CSV + sidecar.

[P App. F.4, Cor. 9] (``aimrepro.paper2.theory_tables.untied_decay_table``).
The record grid is that of the SGD runs compared with it (``horizon``,
``records``), with the window start ``start`` added where it is not on it.
"""

import numpy as np
from _job import run_job
from _replicates import replicate_seeds, write_replicate_table
from _untied_wildcards import replicate_untied_spec

from aimrepro.paper2.theory_tables import untied_decay_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = replicate_untied_spec(wc, wc.d)
        seeds = replicate_seeds(wc)
        start = float(wc.start)
        grid = np.linspace(0.0, float(wc.horizon), int(wc.records))
        times = grid if np.any(np.isclose(grid, start, rtol=0.0, atol=1e-12)) else \
            np.union1d(grid, [start])
        table, diagnostics = untied_decay_table(spec, seeds, times, window_start=start)
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
