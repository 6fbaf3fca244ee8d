"""Rule reference_flow: the theory curve of one replicate -> CSV trajectory + sidecar.

Tied: matrix flow from the run's W(0) and S*; direct: closed ODE from the
run's initial order parameters (``aimrepro.paper2.flows.reference_flow``).
"""

import time
from dataclasses import asdict

import numpy as np
from _job import run_job

from aimrepro.paper2.flows import reference_flow
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec(wc.param, wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation)
        times = np.linspace(0.0, float(wc.horizon), int(wc.records))
        cpu_start = time.process_time()
        trajectory = reference_flow(spec, int(wc.seed), times, weight_decay=float(wc.wd))
        cpu_seconds = time.process_time() - cpu_start
        write_table(smk.output.table, trajectory.columns())
        diagnostics = {
            **trajectory.blowup_diagnostics(),
            "solver_status": int(trajectory.extra["status"][0]) if len(trajectory) else None,
            "nfev": int(trajectory.extra["nfev"][0]) if len(trajectory) else None,
            "cpu_seconds": cpu_seconds,
        }
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
