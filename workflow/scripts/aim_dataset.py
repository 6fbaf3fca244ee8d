"""Rule aim_dataset: one AIM dataset (teacher, training and test sequences) -> .npz + sidecar.

Wildcards name the dataset (its kind, KINDS["aim_dataset"] in
aimrepro_workflow.kinds.paper1, paper1_simulations.smk); the science is
``aimrepro.paper1.data.sample_dataset``.
"""

from pathlib import Path

from _job import run_job

from aimrepro.paper1.data import (DatasetSpec, dataset_bytes, dataset_seed, parse_link_token,
                                  sample_dataset, save_dataset)


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        link, beta = parse_link_token(wc.link)
        spec = DatasetSpec(link=link, T=int(wc.T), rho=float(wc.rho), d=int(wc.d), alpha=float(wc.alpha),
                           replicate=int(wc.seed), n_test=int(smk.params.test_samples), beta=beta)
        job.log.info("sampling %s: n=%d, r=%d, %.1f MB", spec, spec.n, spec.r, dataset_bytes(spec) / 1e6)
        dataset = sample_dataset(spec, smk.params.base_seed)
        save_dataset(smk.output.data, dataset)
        seed_sequence = dataset_seed(smk.params.base_seed, spec)
        # the rule is temp() at a scale whose preset says so (paper1_simulations.smk); the
        # scale is the path's second part (results/<scale>/data/...)
        scale = Path(smk.output.data).parts[1]
        job.write_sidecar(smk.output.data, seed=int(smk.params.base_seed), diagnostics={
            "n": spec.n, "r": spec.r, "n_test": spec.n_test, "bytes": dataset_bytes(spec),
        }, extra_params={"seed_spawn_key": list(seed_sequence.spawn_key)},
            temporary=bool(smk.config["scales"][scale]["data"]["temporary"]))


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
