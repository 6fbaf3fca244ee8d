"""Rule paper2_figS4: untied runs at several d, flows, slaved limit -> figures/{scale}/paper2_figS4.{pdf,png}."""

from _job import run_job
from _untied_tables import load_groups

from aimrepro.figures.paper2_untied import draw_figure_s4


def main(smk) -> None:
    with run_job(smk) as job:
        runs = load_groups(smk.params.runs, lambda r: r["d"])
        flows = load_groups(smk.params.runs, lambda r: r["d"], path="flow_path")
        limits = load_groups(smk.params.limits, lambda r: r["d"], path="limit_path")
        first = smk.params.runs[0]
        fig = draw_figure_s4(runs, flows, [t for g in limits.values() for t in g],
                             fast_horizon=first["fast_horizon"], horizon=first["horizon"])
        job.save_figure(fig, "aimrepro paper 2 figure S4 (untied fast-slow collapse)")
        n_blowups = sum(t.blew_up for g in (*runs.values(), *flows.values(), *limits.values())
                        for t in g)
        job.write_sidecar([smk.output.pdf, smk.output.png],
                          diagnostics={"converged": n_blowups == 0, "n_blowups": n_blowups})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
