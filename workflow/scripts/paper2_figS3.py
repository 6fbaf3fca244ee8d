"""Rule paper2_figS3: weak-recovery scan over d, SGD and flows -> figures/{scale}/paper2_figS3.{pdf,png} + sidecar."""

import math

from _job import run_job

from aimrepro.paper2.analysis import recovery_summary
from aimrepro.paper2.sgd import TIME_FACTOR
from aimrepro.paper2.theory_tables import read_flow_ensemble
from aimrepro.paper2.trajectory import Trajectory
from aimrepro.figures.paper2_dynamics import draw_figure_s3
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        groups, flows, horizon = {}, {}, {}
        for run in smk.params.runs:
            key = (run["param"], run["link"], run["d"])
            groups.setdefault(key, []).append(
                Trajectory.from_columns(read_table(run["path"]), run["d"]))
            flows.setdefault(key, []).append(
                Trajectory.from_columns(read_table(run["flow_path"]), run["d"]))
            horizon[run["param"]] = run["horizon"]
        points = []
        for (param, link, d), runs in sorted(groups.items()):
            summary = recovery_summary(runs, smk.params.threshold)
            flow = recovery_summary(flows[(param, link, d)], smk.params.threshold)
            points.append({"param": param, "link": link, "d": d, "times": summary["times"],
                           "samples_scaled": summary["samples"] / (d * d * math.log(d)),
                           "flow_times": flow["times"],
                           # a flow has no samples: N = T d/(c α/B) at the runs' rate η/(d ln d)
                           "flow_samples_scaled": flow["times"]
                           / (TIME_FACTOR[param] * smk.params.eta)})
            job.log.info("%s %s d=%d T_wr %s flow %s", param, link, d, summary["times"],
                         flow["times"])
        trend = []
        for ensemble in smk.params.ensembles:
            flows_by_seed = read_flow_ensemble(read_table(ensemble["path"]), ensemble["d"])
            times = [flows_by_seed[seed].weak_recovery_time(smk.params.threshold)
                     for seed in ensemble["seeds"]]
            times = [ensemble["horizon"] if t is None else t for t in times]
            param = ensemble["flow"]
            trend.append({"param": param, "link": ensemble["link"], "d": ensemble["d"],
                          "times": times, "samples_scaled": [
                              t / (TIME_FACTOR[param] * smk.params.eta) for t in times]})
        fig = draw_figure_s3(points, horizon=horizon, flow_trend=trend)
        job.save_figure(fig, "aimrepro paper 2 figure S3 (weak-recovery time against d)")
        n_blowups = sum(run.blew_up for runs in groups.values() for run in runs)
        times = {f"{pt['param']}/{pt['link']}/d{pt['d']}":
                 [None if math.isnan(t) else float(t) for t in pt["times"]] for pt in points}
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={
            "converged": n_blowups == 0, "n_blowups": n_blowups, "weak_recovery_times": times})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
