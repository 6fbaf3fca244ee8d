"""Rule gd_run: K tied students trained by Adam on one dataset -> .npz (errors, losses, curves, W) + sidecar.

The science is ``aimrepro.paper1.gd.run_on_dataset``, with the rule's threads computing blocks of
students at once (the result does not depend on them); the loss is logged every 100 steps.
"""

import numpy as np
from _job import run_job

from aimrepro.backends import make_backend
from aimrepro.paper1.data import load_dataset
from aimrepro.paper1.gd import GDSettings, run_on_dataset, save_run


def main(smk) -> None:
    with run_job(smk) as job:
        dataset = load_dataset(smk.input.data)
        settings = GDSettings(**smk.params.optimizer)
        n_inits = int(smk.wildcards.inits)

        def progress(step, losses):
            running = losses[np.isfinite(losses)]
            if step % 100 == 0 and running.size:
                job.log.info("step %d: training loss of the %d running students: min %.3g, median %.3g, max %.3g",
                             step, running.size, running.min(), np.median(running), running.max())

        job.log.info("n=%d, d=%d, r=%d, %d students, %s", dataset.spec.n, dataset.spec.d, dataset.spec.r,
                     n_inits, settings)
        run = run_on_dataset(dataset, n_inits, settings, chunk=smk.params.block, threads=smk.threads,
                             backend=smk.params.backend, callback=progress)
        save_run(smk.output.run, run)
        # the thread count is recorded, not part of the result: the bits do not depend on it
        diagnostics = {**run.diagnostics(), "n": dataset.spec.n, "threads": smk.threads,
                       "backend": make_backend(smk.params.backend).describe()}
        job.log.info("%s", diagnostics)
        job.write_sidecar(smk.output.run, seed=dataset.base_seed, diagnostics=diagnostics,
                          extra_params={"solver_settings": run.result.settings})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
