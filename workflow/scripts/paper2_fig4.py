"""Rule paper2_fig4: SGD, Riccati solutions, truncations and their radius -> figures/{scale}/paper2_fig4.{pdf,png} + sidecar."""

import numpy as np
from _job import run_job
from _moment_inputs import load_replicates

from aimrepro.paper2.moment_experiments import EXACT_ERROR_FLOOR
from aimrepro.figures.paper2_moments import draw_truncation_figure
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        data = load_replicates(smk.params.runs, "exact_path")
        fig, diagnostics = draw_truncation_figure(
            data["runs"], data["references"], data["reference_losses"], data["truncations"],
            smk.params.orders, reference_label="exact (Riccati)", error_floor=EXACT_ERROR_FLOOR,
            radius=float(np.mean(read_table(smk.input.radius)["radius"])))
        job.save_figure(fig, "aimrepro paper 2 figure 4 (exactly solvable case)")
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": diagnostics["n_sgd_blowups"] == 0, **diagnostics})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
