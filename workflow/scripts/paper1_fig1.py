"""Rule paper1_fig1: hardmax SE curves (+ AMP markers) -> figures/{scale}/paper1_fig1.{pdf,png} + sidecar."""

import numpy as np
from _job import run_job

from aimrepro.paper1.channels import make_channel
from aimrepro.figures.paper1 import (AMP_LABELS, AMP_MARKERS, amp_marker_series, draw_figure1,
                                     published_gout_note, se_curve_from_table, unconverged_runs)
from aimrepro.records.tables import read_table
from aimrepro.paper1.state_evolution import weak_recovery_threshold

# Abscissa column of each panel (the SE tables hold both alpha and the axis).
X_COLUMN = {"left": "alpha", "right": "alphabar"}


def main(smk) -> None:
    with run_job(smk) as job:
        panels = {"left": [], "right": []}
        for curve in smk.params.curves:
            panels[curve["panel"]].append(se_curve_from_table(
                read_table(curve["path"]), channel=curve["channel"], rho=curve["rho"],
                x_column=X_COLUMN[curve["panel"]]))

        thresholds = {}
        if smk.params.small_width_limit:
            for channel in smk.params.channels:
                thresholds[channel] = float(
                    weak_recovery_threshold(make_channel(channel, T=smk.params.T)))
            job.log.info("weak-recovery thresholds (rho -> 0): %s", thresholds)

        # AMP markers: mean ± std over converged seeds, coloured as the curves of their rho.
        # The published g_out's runs diverge as erratum B1 predicts: said apart, not as a warning.
        markers, n_unconverged_runs, legend = [], 0, {}
        published_diverged, published_runs = 0, 0
        for curve in smk.params.amp_curves:
            table = read_table(curve["path"])
            markers += amp_marker_series(table, rho=curve["rho"], marker=AMP_MARKERS[curve["channel"]])
            unusable = unconverged_runs(table)
            if curve["channel"] == "hardmax_paper":
                diverged = int(np.sum(table["n_diverged"]))
                published_diverged += diverged
                published_runs += int(np.sum(table["n_runs"]))
                unusable -= diverged
            n_unconverged_runs += unusable
            legend[f"{AMP_LABELS[curve['channel']]}, d = {curve['d']}"] = AMP_MARKERS[curve["channel"]]
        explained = [published_gout_note(published_diverged, published_runs)] if published_diverged else []

        fig, n_unconverged = draw_figure1(panels["left"], panels["right"], thresholds,
                                          left_markers=markers, marker_legend=legend,
                                          n_unconverged_runs=n_unconverged_runs, explained_runs=explained)
        job.save_figure(fig, "aimrepro paper 1 figure 1 (hardmax, T = 2)")
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": n_unconverged == 0,
            "n_unconverged_points": n_unconverged,
            "weak_recovery_thresholds": thresholds,
            "n_unconverged_amp_runs": n_unconverged_runs,
            "n_published_gout_runs_diverged": published_diverged,
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
