"""Rule flow_ensemble: the deterministic flows of n replicates of one problem -> CSV table + sidecar.

Flow ``tied``: the Gaussian-equivalent matrix flow; ``direct``: the closed ODE of
direct S; ``exact``: the exact finite-d tied population flow (polynomial links).
Each replicate starts from the initial state of the SGD replicate of its seed
(``aimrepro.paper2.theory_tables.flow_ensemble_table``).
"""

from dataclasses import asdict

import numpy as np
from _job import run_job

from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.theory_tables import flow_ensemble_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        param = "direct" if wc.flow == "direct" else "tied"
        spec = ProblemSpec(param, wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation)
        seeds = range(int(wc.seed), int(wc.seed) + int(wc.n))
        times = np.linspace(0.0, float(wc.horizon), int(wc.records))
        table, diagnostics = flow_ensemble_table(spec, seeds, times, flow=wc.flow,
                                                 weight_decay=float(wc.wd))
        write_table(smk.output.table, table)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec), "seeds": list(seeds)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
