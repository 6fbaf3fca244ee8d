"""Rule two_layer_amp_run: two-layer GAMP-RIE on a dataset it samples -> .npz + sidecar.

The dataset (``aimrepro.paper1.two_layer.model.sample_dataset``: the teachers S1, S2
and the labels of n = alpha d^2 sequences) is keyed by the config's seed and the run's
values; it is small and read once, so it is sampled here rather than stored.  The
solver is ``aimrepro.paper1.two_layer.amp.run_on_dataset`` with
paper1.two_layer.amp_solver (docs/paper1.md §14.7).
"""

from _job import run_job
from _two_layer import sampled_dataset, write_run

from aimrepro.paper1.amp import StoppingRule
from aimrepro.paper1.two_layer.amp import run_on_dataset, save_run


def main(smk) -> None:
    with run_job(smk) as job:
        dataset = sampled_dataset(smk)
        spec = dataset.spec
        stopping = StoppingRule(**smk.params.solver)
        job.log.info("n=%d, d=%d, r=%d, c=%g, %s", spec.n, spec.d, spec.r, spec.skip, stopping)

        def progress(iteration, errors, C_hat):
            if iteration % 10 == 0:
                job.log.info("iteration %d: errors %.4g, %.4g; predicted %.4g, %.4g", iteration, errors[0],
                             errors[1], C_hat[0, 0], C_hat[1, 1])

        write_run(job, dataset, save_run, run_on_dataset(dataset, stopping=stopping, callback=progress))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
