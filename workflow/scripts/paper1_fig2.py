"""Rule paper1_fig2: softmax SE curves -> figures/{scale}/paper1_fig2.{pdf,png} + sidecar.

Simulation markers: each is a named input of the rule (``amp``, ``gd``) with
a reader in MARKER_READERS that turns it into MarkerSeries on its panel and
counts its unconverged runs (AMP) or diverged students (GD).  The claims' GD
trend point (inputs ``gd_trend``, ``gd_trend_amp``) is drawn at its largest d,
with its excess against 1/d in an inset, estimated as its claims row is
(``aimrepro.paper1.gd.averaged_trend_point``).
"""

from _job import run_job

from aimrepro.figures.paper1 import (AMP_T_MARKERS, GDTrend, amp_marker_series, diverged_students,
                                     draw_figure2, gd_marker_series, se_curve_from_table,
                                     unconverged_runs)
from aimrepro.figures.style import LIMIT_COLOUR
from aimrepro.paper1 import amp, gd
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.state_evolution import solve_se
from aimrepro.paper1.thresholds import n_softmax_measurements
from aimrepro.records.tables import read_table

# Abscissa column of each curve: alpha on the left, alpha (T^2+T-2) on the right.
X_COLUMN = {"left": "alpha", "right": "alphaT"}


def amp_markers(smk):
    """AMP summaries (right panel) -> MarkerSeries against alpha (T^2+T-2), and unconverged runs."""
    series, n_unconverged = [], 0
    for curve in smk.params.amp_curves:
        table = read_table(curve["path"])
        series += amp_marker_series(table, x_scale=n_softmax_measurements(curve["T"]), colour=LIMIT_COLOUR,
                                    marker=AMP_T_MARKERS.get(curve["T"], "o"),
                                    label=f"AMP, T = {curve['T']} (d = {curve['d']})")
        n_unconverged += unconverged_runs(table)
    return "right", series, n_unconverged


def gd_markers(smk):
    """GD summaries (right panel, one per T) -> '+' single and 'x' averaged MarkerSeries; diverged students."""
    series, n_diverged = [], 0
    for curve in smk.params.gd_curves:
        table = read_table(curve["path"])
        series += gd_marker_series(table, curve["T"])
        n_diverged += diverged_students(table)
    return "right", series, n_diverged


# Named input -> function(smk) -> (panel, list of MarkerSeries, unconverged runs or diverged students).
MARKER_READERS = {"amp": amp_markers, "gd": gd_markers}


def gd_trend(smk) -> GDTrend | None:
    """The claims' GD trend point (runs of paper1.trends.gd at this scale), estimated as its claims row is."""
    trend = getattr(smk.params, "gd_trend", None)
    if not trend or not trend["points"]:
        return None
    K = trend["points"][0]["inits"]
    se_value = solve_se(make_channel("softmax", T=trend["T"], beta=trend["beta"]), trend["alpha"],
                        trend["rho"]).mmse
    points = [gd.averaged_trend_point(point["d"], [gd.load_run_summary(run) for run in point["runs"]],
                                      [amp.load_run_summary(run) for run in point["amp_runs"]], se_value, K)
              for point in trend["points"]]
    points = [p for p in points if p.n >= 2]
    return GDTrend(trend["T"], trend["alphaT"], K, se_value, tuple(p.d for p in points),
                   tuple(p.estimate for p in points), tuple(p.sem for p in points)) if points else None


def main(smk) -> None:
    with run_job(smk) as job:
        panels = {"left": [], "right": []}
        for curve in smk.params.curves:
            panels[curve["panel"]].append(se_curve_from_table(
                read_table(curve["path"]), channel=curve["channel"], rho=curve["rho"],
                x_column=X_COLUMN[curve["panel"]]))

        markers = {"left": [], "right": []}
        bad_runs = {}
        for name, reader in MARKER_READERS.items():
            if getattr(smk.input, name, None):
                panel, series, bad_runs[name] = reader(smk)
                markers[panel].extend(series)
        n_unconverged_runs = bad_runs.get("amp", 0)
        n_diverged = bad_runs.get("gd", 0)
        gd_curves = list(getattr(smk.params, "gd_curves", []) or []) if getattr(smk.input, "gd", None) else []
        gd_note = (f"GD: + single, x mean of K = {gd_curves[0]['inits']} (d = {gd_curves[0]['d']})"
                   if gd_curves else None)

        fig, n_unconverged = draw_figure2(panels["left"], panels["right"],
                                          left_markers=markers["left"],
                                          right_markers=markers["right"],
                                          n_unconverged_runs=n_unconverged_runs,
                                          gd_Ts=[c["T"] for c in gd_curves], gd_note=gd_note,
                                          n_diverged_students=n_diverged, gd_trend=gd_trend(smk))
        job.save_figure(fig, "aimrepro paper 1 figure 2 (softmax, beta = 1)")
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": n_unconverged == 0,
            "n_unconverged_points": n_unconverged,
            "n_unconverged_simulation_runs": n_unconverged_runs,
            "n_diverged_gd_students": n_diverged,
        })


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
