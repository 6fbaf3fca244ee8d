"""Rule paper2_fig3: untied SGD runs, their population flows, the plateau runs -> figures/{scale}/paper2_fig3.{pdf,png}."""

from _job import run_job
from _untied_tables import load_groups

from aimrepro.paper2.analysis import escape_time
from aimrepro.figures.paper2_untied import draw_figure3


def main(smk) -> None:
    with run_job(smk) as job:
        runs = load_groups(smk.params.runs, lambda r: r["link"])
        flows = load_groups(smk.params.runs, lambda r: r["link"], path="flow_path")
        plateau = load_groups(smk.params.plateau, lambda r: r["d"])
        first = smk.params.plateau[0] if smk.params.plateau else {}
        fig, diagnostics = draw_figure3(runs, flows, list(runs), threshold=smk.params.threshold,
                                        plateau=plateau, plateau_link=first.get("link"),
                                        plateau_start=first.get("start"))
        job.save_figure(fig, "aimrepro paper 2 figure 3 (untied attention)")
        times = {link: [escape_time(t, smk.params.threshold) for t in group]
                 for link, group in runs.items()}
        job.log.info("escape times %s", times)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": diagnostics["n_blowups"] == 0 and diagnostics["n_flow_blowups"] == 0,
            **diagnostics, "escape_times": times})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
