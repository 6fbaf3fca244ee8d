"""Rule paper2_figS5: escape time vs teacher mean, instability times, fast states -> figures/{scale}/paper2_figS5.{pdf,png}."""

from _job import run_job
from _untied_tables import load_groups

from aimrepro.figures.paper2_untied import draw_figure_s5
from aimrepro.paper2.analysis import instability_time
from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        def key(run):
            return run["teacher_mean"], run["d"]

        runs = load_groups(smk.params.runs, key)
        flows = load_groups(smk.params.runs, key, path="flow_path")
        first = smk.params.runs[0]
        potential = Potential(ProblemSpec("untied", first["link"], first["T"], first["d"]).loss(),
                              first["T"])
        instability = {k: [instability_time(flow, potential, k[0]) for flow in group]
                       for k, group in flows.items()}
        fig = draw_figure_s5(runs, flows, read_table(smk.input.fast_states),
                             threshold=smk.params.threshold, horizon=first["horizon"],
                             fast_horizon=first["fast_horizon"], instability=instability)
        job.save_figure(fig, "aimrepro paper 2 figure S5 (untied weak-recovery dichotomy)")
        n_blowups = sum(t.blew_up for g in (*runs.values(), *flows.values()) for t in g)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": n_blowups == 0, "n_blowups": n_blowups,
            "instability_times": {f"m2={m2:g}/d={d}": times
                                  for (m2, d), times in instability.items()}})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
