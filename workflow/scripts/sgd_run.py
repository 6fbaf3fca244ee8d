"""Rule sgd_run: one online-SGD run -> CSV trajectory + sidecar.

Wildcards name the problem, the loss prefactor ``c`` and the optimiser
(paper2_dynamics.smk); the science is ``aimrepro.paper2.sgd.SGDRun``.
"""

import time
from dataclasses import asdict

from _job import run_job

from aimrepro.backends import blas_threads, make_backend
from aimrepro.paper2.sgd import ProblemSpec, SGDRun, SGDSettings
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec(wc.param, wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation, loss_prefactor=float(wc.c))
        settings = SGDSettings(lr=float(wc.lr), batch=int(wc.B), horizon=float(wc.horizon),
                               weight_decay=float(wc.wd), n_records=int(wc.records),
                               stop_overlap=None if wc.stop == "none" else float(wc.stop))
        cpu_start = time.process_time()
        trajectory = SGDRun(spec, settings, int(wc.seed)).run(progress_every=10,
                                                              backend=smk.params.backend)
        cpu_seconds = time.process_time() - cpu_start
        write_table(smk.output.table, trajectory.columns())
        threshold = smk.config["paper2"]["threshold"]
        diagnostics = {
            **trajectory.blowup_diagnostics(),
            "n_steps": int(trajectory.extra["n_steps"][-1]),
            "weak_recovery_time": trajectory.weak_recovery_time(threshold),
            "threshold": threshold,
            "cpu_seconds": cpu_seconds,
            # SGD's GEMMs use the job's BLAS threads: its last digits may depend on them (README)
            "blas_threads": blas_threads(),
            "backend": make_backend(smk.params.backend).describe(),
        }
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec), "settings": asdict(settings)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
