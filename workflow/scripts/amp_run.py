"""Rule amp_run: GAMP-RIE of one channel on one dataset -> .npz (summary, trace, S_hat) + sidecar.

The science is ``aimrepro.paper1.amp.run_on_dataset``; every tenth iteration is logged.
"""

from _job import run_job

from aimrepro.backends import make_backend
from aimrepro.paper1.amp import run_on_dataset, save_run
from aimrepro.paper1.data import load_dataset, parse_link_token


def main(smk) -> None:
    with run_job(smk) as job:
        channel, _ = parse_link_token(smk.wildcards.channel)
        dataset = load_dataset(smk.input.data)
        solver = dict(smk.params.solver)

        def progress(state):
            if state.iteration % 10 == 0:
                job.log.info("iteration %d: change %.3g, predicted error %.4g, q_hat %.4g",
                             state.iteration, state.change, state.se.C_hat, state.se.q_hat)

        run = run_on_dataset(dataset, channel, damping=solver["damping"], tol=solver["tol"],
                             max_iter=solver["max_iter"], callback=progress, backend=smk.params.backend)
        save_run(smk.output.run, run)
        diagnostics = {**run.result.diagnostics(), "generalisation_error": run.generalisation_error,
                       "n": dataset.spec.n, "backend": make_backend(smk.params.backend).describe()}
        job.log.info("%s", diagnostics)
        job.write_sidecar(smk.output.run, seed=dataset.base_seed, diagnostics=diagnostics,
                          extra_params={"solver_settings": run.result.settings})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
