"""Rule paper2_fig1: SGD, matrix flows and truncations -> figures/{scale}/paper2_fig1.{pdf,png} + sidecar."""

from _job import run_job
from _moment_inputs import load_replicates

from aimrepro.paper2.moment_experiments import FLOW_ERROR_FLOOR
from aimrepro.figures.paper2_moments import draw_truncation_figure


def main(smk) -> None:
    with run_job(smk) as job:
        data = load_replicates(smk.params.runs, "flow_path")
        fig, diagnostics = draw_truncation_figure(
            data["runs"], data["references"], data["reference_losses"], data["truncations"],
            smk.params.orders, reference_label="matrix flow (M = ∞)",
            error_floor=FLOW_ERROR_FLOOR)
        job.save_figure(fig, "aimrepro paper 2 figure 1 (truncations of the moment hierarchy)")
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": diagnostics["n_sgd_blowups"] == 0
            and diagnostics["n_reference_blowups"] == 0, **diagnostics})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
