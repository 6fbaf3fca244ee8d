"""Rule untied_sgd_run: one online-SGD run of untied attention -> CSV trajectory + sidecar.

Records on the slow time τ = lr n/d and, densely, on the fast time t = lr n
(``aimrepro.paper2.sgd.fast_slow_record_times``); stops on the symmetric
overlap when the path says so.
"""

import time
from dataclasses import asdict

from _job import run_job
from _untied_wildcards import untied_spec, untied_stop, untied_times

from aimrepro.backends import blas_threads, make_backend
from aimrepro.paper2.sgd import SGDRun, SGDSettings
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = untied_spec(wc)
        settings = SGDSettings(lr=float(wc.lr), batch=int(wc.B), horizon=float(wc.horizon),
                               weight_decay=float(wc.wd), record_times=tuple(untied_times(wc)),
                               stop_overlap=untied_stop(wc), stop_measure="symmetric_overlap")
        cpu_start = time.process_time()
        trajectory = SGDRun(spec, settings, int(wc.seed)).run(progress_every=20,
                                                              backend=smk.params.backend)
        cpu_seconds = time.process_time() - cpu_start
        write_table(smk.output.table, trajectory.columns())
        diagnostics = {
            **trajectory.blowup_diagnostics(),
            "n_steps": int(trajectory.extra["n_steps"][-1]),
            "final_symmetric_overlap": float(trajectory.symmetric_overlap[-1]),
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
