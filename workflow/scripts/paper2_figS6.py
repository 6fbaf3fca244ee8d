"""Rule paper2_figS6: truncation-error tables -> figures/{scale}/paper2_figS6.{pdf,png} + sidecar."""

from _job import run_job

from aimrepro.figures.paper2_moments import draw_figure_s6
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        tables = {table["weight_decay"]: read_table(table["path"]) for table in smk.params.tables}
        fig, diagnostics = draw_figure_s6(tables, times=smk.params.times,
                                          matrix_scale=smk.params.matrix_scale)
        job.save_figure(fig, "aimrepro paper 2 figure S6 (truncation error against the order)")
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar([smk.output.pdf, smk.output.png],
                          diagnostics={"converged": True, "horizons": diagnostics})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
