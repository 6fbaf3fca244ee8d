"""What the two-layer run rules share: the dataset a run samples, and its run file with the sidecar.

A two-layer dataset is small and read once, so each run samples it
(``aimrepro.paper1.two_layer.model.sample_dataset``, keyed by the config's seed and the
run's values: the AMP and GD runs of the same values see the same teachers and data).
"""

from typing import Any

from aimrepro.paper1.two_layer.model import TwoLayerDataset, TwoLayerSpec, sample_dataset


def sampled_dataset(smk: Any) -> TwoLayerDataset:
    """The dataset of the job's wildcards (rho, d, alpha, skip, seed) and the config's seed."""
    wc = smk.wildcards
    spec = TwoLayerSpec(rho=float(wc.rho), d=int(wc.d), alpha=float(wc.alpha), skip=float(wc.skip),
                        replicate=int(wc.seed), n_test=int(smk.params.test_samples))
    return sample_dataset(spec, int(smk.config["seed"]))


def write_run(job: Any, dataset: TwoLayerDataset, save, run: Any) -> None:
    """``save(output.run, run)``, then the sidecar with the run's summary and settings."""
    save(job.smk.output.run, run)
    diagnostics = {**run.summary(), "n": dataset.spec.n}
    job.log.info("%s", diagnostics)
    job.write_sidecar(job.smk.output.run, seed=dataset.base_seed, diagnostics=diagnostics,
                      extra_params={"solver_settings": run.settings})
