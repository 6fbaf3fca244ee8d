"""Rule tokens_amp_run: GAMP-RIE with the sampled hardmax g_out of T tokens on one dataset -> .npz + sidecar.

The channel is ``aimrepro.paper1.hardmax_tokens.HardmaxTokens`` (g_out and its
curvature by importance sampling with K proposals, seeded from the config's
seed and the run's values); the solver is ``aimrepro.paper1.amp.gamp_rie``
with the config's amp_solver (docs/paper1.md §3.6: with a sampled g_out the
runs end ``stationary``, jittering around their fixed point).
"""

from _job import run_job

import math

import numpy as np

from aimrepro.model import plug_in_test_error
from aimrepro.paper1.amp import AMPRun, gamp_rie, save_run
from aimrepro.paper1.data import load_dataset
from aimrepro.paper1.hardmax_tokens import HardmaxTokens

#: Spawn key of the g_out sampler's seed, apart from the datasets' keys.
SAMPLER_KEY = 0x6A17


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        dataset = load_dataset(smk.input.data)
        T, d, seed, proposals = int(wc.T), int(wc.d), int(wc.seed), int(wc.proposals)
        sampler = np.random.SeedSequence(entropy=dataset.base_seed, spawn_key=(SAMPLER_KEY, T, d, seed, proposals))
        channel = HardmaxTokens(T=T, proposals=proposals, rng=np.random.default_rng(sampler))
        solver = dict(smk.params.solver)

        def progress(state):
            if state.iteration % 10 == 0:
                job.log.info("iteration %d: change %.3g, predicted error %.4g", state.iteration, state.change,
                             state.se.C_hat)

        result = gamp_rie(dataset.X, dataset.y, channel, dataset.spec.rho, damping=solver["damping"],
                          S_true=dataset.S, callback=progress, tol=solver["tol"], max_iter=solver["max_iter"])
        plugin = plug_in_test_error(dataset.X_test, dataset.y_test, result.S_hat, "hardmax")
        save_run(smk.output.run, AMPRun("hardmax", None, result, plugin, math.nan))
        diagnostics = {**result.diagnostics(), "plugin_generalisation_error": plugin, "n": dataset.spec.n}
        job.log.info("%s", diagnostics)
        job.write_sidecar(smk.output.run, seed=dataset.base_seed, diagnostics=diagnostics,
                          extra_params={"solver_settings": result.settings, "sampler_seed": [dataset.base_seed, SAMPLER_KEY, T, d, seed, proposals]})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
