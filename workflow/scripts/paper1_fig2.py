"""Rule paper1_fig2: softmax SE curves -> figures/{scale}/paper1_fig2.{pdf,png} + sidecar.

Simulation markers: later issues add named inputs to the rule (e.g. ``amp``,
``gd_single``, ``gd_averaged``) and a reader for each to MARKER_READERS;
every named input that has a reader becomes a MarkerSeries on its panel.
"""

from _job import run_job

from aimrepro.paper1_figures import draw_figure2, se_curve_from_table
from aimrepro.plotting import save_figure
from aimrepro.provenance import config_hash, git_state, read_table

# Abscissa column of each curve: alpha on the left, alpha (T^2+T-2) on the right.
X_COLUMN = {"left": "alpha", "right": "alphaT"}

# Named input -> (panel, function(paths) -> list of MarkerSeries).  Empty until
# AMP and GD results exist.
MARKER_READERS = {}


def main(smk) -> None:
    with run_job(smk) as job:
        panels = {"left": [], "right": []}
        for curve in smk.params.curves:
            panels[curve["panel"]].append(se_curve_from_table(
                read_table(curve["path"]), channel=curve["channel"], rho=curve["rho"],
                x_column=X_COLUMN[curve["panel"]]))

        markers = {"left": [], "right": []}
        for name, (panel, reader) in MARKER_READERS.items():
            paths = getattr(smk.input, name, None)
            if paths:
                markers[panel].extend(reader([paths] if isinstance(paths, str) else paths))

        fig, n_unconverged = draw_figure2(panels["left"], panels["right"],
                                          left_markers=markers["left"],
                                          right_markers=markers["right"])
        git = git_state()
        save_figure(fig, smk.output.pdf, smk.output.png, metadata={
            "title": "aimrepro paper 1 figure 2 (softmax, beta = 1)",
            "commit": git["commit"], "dirty": git["dirty"],
            "config_hash": config_hash(smk.config),
        })
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": n_unconverged == 0,
            "n_unconverged_points": n_unconverged,
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
