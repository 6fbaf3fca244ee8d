"""Rule two_layer_gd_run: K two-layer tied students trained by Adam -> .npz summary + sidecar.

The dataset is the one the AMP runs of the same values sample
(``aimrepro.paper1.two_layer.model.sample_dataset``, keyed by the config's seed);
the science is ``aimrepro.paper1.two_layer.gd.run_on_dataset`` (docs/paper1.md §14.8).
"""

from _job import run_job
from _two_layer import sampled_dataset, write_run

from aimrepro.paper1.gd import GDSettings
from aimrepro.paper1.two_layer.gd import run_on_dataset, save_run


def main(smk) -> None:
    with run_job(smk) as job:
        dataset = sampled_dataset(smk)
        spec = dataset.spec
        settings = GDSettings(lr=float(smk.params.lr), steps=int(smk.wildcards.steps),
                              init_scale=float(smk.params.init_scale))
        n_inits = int(smk.wildcards.inits)
        job.log.info("n=%d, d=%d, r=%d, c=%g, %d students, %s", spec.n, spec.d, spec.r, spec.skip, n_inits, settings)
        write_run(job, dataset, save_run, run_on_dataset(dataset, n_inits, settings))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
