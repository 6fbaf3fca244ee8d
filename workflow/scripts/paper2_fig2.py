"""Rule paper2_fig2: SGD runs and reference flows -> figures/{scale}/paper2_fig2.{pdf,png} + sidecar."""

from _job import run_job

from aimrepro.paper2.trajectory import Trajectory
from aimrepro.figures.paper2_dynamics import draw_figure2
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        runs, flows, links = {}, {}, []
        for run in smk.params.runs:
            key = (run["param"], run["link"])
            runs.setdefault(key, []).append(
                Trajectory.from_columns(read_table(run["path"]), run["d"]))
            flows.setdefault(key, []).append(
                Trajectory.from_columns(read_table(run["flow_path"]), run["d"]))
            if run["link"] not in links:
                links.append(run["link"])
        fig, diagnostics = draw_figure2(runs, flows, links, threshold=smk.params.threshold)
        job.save_figure(fig, "aimrepro paper 2 figure 2 (tied vs direct attention)")
        summary = {f"{param}/{link}": [t.weak_recovery_time(smk.params.threshold) for t in group]
                   for (param, link), group in runs.items()}
        job.log.info("weak-recovery times %s", summary)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": diagnostics["n_blowups"] == 0 and diagnostics["n_flow_blowups"] == 0,
            **diagnostics, "weak_recovery_times": summary})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
