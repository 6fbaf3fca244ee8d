"""Rule paper1_figS2: SE generalisation curves (+ AMP held-out errors) -> figures/{scale}/paper1_figS2.* + sidecar.

The curves are rule se_generalisation's tables; the markers the AMP summaries of
Figures 1 and 2 at the same channel, T and rho (Plan.figureS2_amp_curves).
"""

from _job import run_job

from aimrepro.figures.paper1_generalisation import (draw_figureS2, gen_curve_from_table,
                                                    gen_markers_from_table)
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = [gen_curve_from_table(read_table(c["path"]), channel=c["channel"], T=c["T"])
                  for c in smk.params.curves]
        markers = [gen_markers_from_table(read_table(c["path"]), channel=c["channel"], T=c["T"], d=c["d"])
                   for c in smk.params.amp_curves]
        fig, n_unconverged, n_points = draw_figureS2(curves, markers)
        job.log.info("%d curves, %d AMP points, %d unconverged SE points", len(curves), n_points, n_unconverged)
        job.save_figure(fig, "aimrepro paper 1 figure S2 (generalisation error, beyond the paper)")
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": n_unconverged == 0, "n_unconverged_points": n_unconverged,
            "n_amp_points": n_points,
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
