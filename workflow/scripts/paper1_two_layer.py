"""Rule paper1_two_layer: two attention layers -> figures/{scale}/paper1_two_layer.{pdf,png} + sidecar.

Beyond the paper (docs/paper1.md §14): MMSE1 and MMSE2 against alpha per drawn skip c
(rule two_layer_se_curve) with GAMP-RIE markers (rule two_layer_amp_run), the one-layer
softmax SE and the c -> infinity limit on the same grid (computed here by the package:
milliseconds); ``aimrepro.figures.paper1_two_layer``.
"""

from _job import run_job

import numpy as np

from aimrepro.figures.paper1_two_layer import amp_points_from_runs, curve_from_table, draw_two_layer_figure
from aimrepro.paper1.channels import Softmax
from aimrepro.paper1.state_evolution import se_curve
from aimrepro.paper1.two_layer import state_evolution as tse
from aimrepro.paper1.two_layer.amp import load_run_summary
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        rho = float(smk.params.rho)
        curves = [curve_from_table(read_table(path), skip=c["skip"])
                  for c, path in zip(smk.params.curves, smk.input.curves)]
        by_skip: dict[float, dict[float, list]] = {}
        for run, path in zip(smk.params.amp, smk.input.amp):
            by_skip.setdefault(run["skip"], {}).setdefault(run["alpha"], []).append(load_run_summary(path))
        points = [amp_points_from_runs(c, runs) for c, runs in sorted(by_skip.items())]
        alphas = curves[0].alpha
        one_layer = se_curve(Softmax(T=2), list(alphas), rho)
        limit1, limit2 = tse.large_skip_limit(alphas, rho)
        fig, n_unconverged = draw_two_layer_figure(
            curves, one_layer_alpha=alphas, one_layer_mmse=np.array([p.mmse for p in one_layer]),
            one_layer_converged=np.array([p.converged for p in one_layer]), limit_alpha=alphas,
            limit_mmse1=limit1, limit_mmse2=limit2,
            thresholds=(tse.one_layer_threshold(rho), tse.two_layer_threshold(rho)), amp=points)
        job.save_figure(fig, "aimrepro paper 1, beyond the paper: two attention layers")
        diagnostics = {"converged": n_unconverged == 0, "n_unconverged_points": n_unconverged,
                       "n_unsettled_amp_runs": int(sum(p.n_unsettled for p in points))}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
