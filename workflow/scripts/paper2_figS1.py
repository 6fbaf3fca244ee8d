"""Rule paper2_figS1: Theorem-1 tables -> figures/{scale}/paper2_figS1.{pdf,png} + sidecar."""

from _job import run_job

from aimrepro.figures.paper2_dynamics import draw_figure_s1
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        rows = [{name: float(col[0]) for name, col in read_table(path).items()}
                for path in smk.input.tables]
        fig = draw_figure_s1(rows, list(smk.params.links))
        job.save_figure(fig, "aimrepro paper 2 figure S1 (Theorem 1 at finite d)")
        job.write_sidecar([smk.output.pdf, smk.output.png],
                          diagnostics={"converged": True, "n_dims": len(rows)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
