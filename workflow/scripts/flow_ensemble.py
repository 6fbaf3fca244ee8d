"""Rule flow_ensemble: the deterministic flows of n replicates of one problem -> CSV table + sidecar.

Flow ``tied``: the Gaussian-equivalent matrix flow; ``direct``: the closed ODE of
direct S; ``exact``: the exact finite-d tied population flow (polynomial links).
Each replicate starts from the initial state of the SGD replicate of its seed
(``aimrepro.paper2.theory_tables.flow_ensemble_table``).
"""

import numpy as np
from _job import run_job
from _replicates import replicate_seeds, write_replicate_table

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import flow_ensemble_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        param = "direct" if wc.flow == "direct" else "tied"
        spec = ProblemSpec(param, wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation)
        seeds = replicate_seeds(wc)
        times = np.linspace(0.0, float(wc.horizon), int(wc.records))
        table, diagnostics = flow_ensemble_table(spec, seeds, times, flow=wc.flow,
                                                 weight_decay=float(wc.wd))
        write_replicate_table(job, smk.output.table, table, diagnostics, spec, seeds)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
