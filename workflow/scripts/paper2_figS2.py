"""Rule paper2_figS2: landscape tables -> figures/{scale}/paper2_figS2.{pdf,png} + sidecar."""

from _job import run_job

from aimrepro.paper2.experiments import aim_tied_limits
from aimrepro.figures.paper2_dynamics import draw_figure_s2
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        links = list(smk.params.links)
        tables = {link: read_table(path) for link, path in zip(links, smk.input.tables)}
        heatmap = "softmax" if "softmax" in links else links[0]
        fig = draw_figure_s2(tables, rho=smk.params.rho, heatmap_link=heatmap)
        job.save_figure(fig, "aimrepro paper 2 figure S2 (population landscape)")
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": True, "heatmap_link": heatmap, **aim_tied_limits(smk.params.rho)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
