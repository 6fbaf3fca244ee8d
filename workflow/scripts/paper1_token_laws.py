"""Rule paper1_token_laws: the SE against GAMP-RIE and GD for tokens that are not Gaussian -> figures/{scale}/paper1_token_laws.{pdf,png} + sidecar.

Beyond the paper (docs/paper1.md §13): the law SE curves (rule token_law_se_curve), Figure 2
right's softmax SE curve (rule se_curve) and the replicate tables of rules token_law_amp
and token_law_gd; the drawing is ``aimrepro.figures.paper1_token_laws``.
"""

from _job import run_job
from _token_law_tables import amp_tables, gd_tables

from aimrepro.figures.paper1_token_laws import draw_token_laws_figure
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        points = smk.params.points
        tables = amp_tables(points, smk.params.runs)
        hardmax = [i for i, point in enumerate(points) if point["channel"] == "hardmax"]
        softmax = [i for i, point in enumerate(points) if point["channel"] == "softmax"]
        first = hardmax[0]
        curves = {curve["law"]: read_table(curve["path"]) for curve in smk.params.curves}
        softmax_curve = read_table(smk.params.softmax_curve["path"])
        fig, n_unconverged = draw_token_laws_figure(
            hardmax_point=points[first], hardmax_curves=curves, hardmax_tables=tables[first],
            softmax_curve=softmax_curve, softmax_points=[points[i] for i in softmax],
            softmax_tables=[tables[i] for i in softmax], gd_point=smk.params.gd_point,
            gd_tables=gd_tables(smk.params.gd_runs))
        job.save_figure(fig, "aimrepro paper 1 beyond the paper: tokens that are not Gaussian")
        diagnostics = {"converged": n_unconverged == 0, "n_unconverged_points": n_unconverged}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
