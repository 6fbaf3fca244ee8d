"""Rule paper2_fig2: SGD runs, reference flows, exact finite-d flows -> figures/{scale}/paper2_fig2.{pdf,png} + sidecar."""

from _job import run_job

from aimrepro.figures.paper2_dynamics import draw_figure2
from aimrepro.paper2.analysis import samples_per_time
from aimrepro.paper2.theory_tables import read_flow_ensemble
from aimrepro.paper2.trajectory import Trajectory
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
        exact = {}
        for ensemble in smk.params.exact:
            by_seed = read_flow_ensemble(read_table(ensemble["path"]), ensemble["d"])
            exact[ensemble["link"]] = [by_seed[seed] for seed in ensemble["seeds"]]
        first = smk.params.runs[0]
        scale = {param: samples_per_time(param, d=first["d"], lr=first["lr"],
                                         batch=first["batch"]) for param in ("tied", "direct")}
        fig, diagnostics = draw_figure2(runs, flows, links, threshold=smk.params.threshold,
                                        exact=exact, samples_per_time=scale)
        job.save_figure(fig, "aimrepro paper 2 figure 2 (tied vs direct attention)")
        summary = {f"{param}/{link}": [t.weak_recovery_samples(smk.params.threshold)
                                       for t in group] for (param, link), group in runs.items()}
        job.log.info("weak-recovery samples %s", summary)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": diagnostics["n_blowups"] == 0 and diagnostics["n_flow_blowups"] == 0,
            **diagnostics, "weak_recovery_samples": summary, "samples_per_time": scale})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
