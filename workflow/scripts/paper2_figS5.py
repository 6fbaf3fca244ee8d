"""Rule paper2_figS5: escape time vs teacher mean, fast states -> figures/{scale}/paper2_figS5.{pdf,png}."""

from _job import run_job
from _untied_tables import load_groups

from aimrepro.figures.paper2_untied import draw_figure_s5
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        def key(run):
            return run["teacher_mean"], run["d"]

        runs = load_groups(smk.params.runs, key)
        flows = load_groups(smk.params.runs, key, path="flow_path")
        first = smk.params.runs[0]
        fig = draw_figure_s5(runs, flows, read_table(smk.input.fast_states),
                             threshold=smk.params.threshold, horizon=first["horizon"],
                             fast_horizon=first["fast_horizon"])
        job.save_figure(fig, "aimrepro paper 2 figure S5 (untied weak-recovery dichotomy)")
        n_blowups = sum(t.blew_up for g in (*runs.values(), *flows.values()) for t in g)
        job.write_sidecar([smk.output.pdf, smk.output.png],
                          diagnostics={"converged": n_blowups == 0, "n_blowups": n_blowups})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
