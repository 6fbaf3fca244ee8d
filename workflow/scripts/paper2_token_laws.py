"""Rule paper2_token_laws: weak recovery with tokens that are not Gaussian -> figures/{scale}/paper2_token_laws.{pdf,png} + sidecar.

Beyond the paper (docs/paper2.md §10): the runs of rule token_law_sgd at each
parametrisation's largest d; the drawing is ``aimrepro.figures.paper2_token_laws``.
"""

from _job import run_job

from aimrepro.figures.paper2_token_laws import draw_token_laws_dynamics
from aimrepro.paper2.token_law_runs import load_law_replicates


def main(smk) -> None:
    with run_job(smk) as job:
        sgd, law_flows, gaussian_flows, dims = {}, {}, {}, {}
        for run in smk.params.runs:
            _, trajectories = load_law_replicates(run["path"], run["d"])
            key = (run["param"], run["law"])
            sgd[key] = [t[0] for t in trajectories.values()]
            law_flows[key] = [t[2] for t in trajectories.values()]
            # the Gaussian flows of a replicate do not depend on the law: drawn once per parametrisation
            gaussian_flows.setdefault(run["param"], [t[1] for t in trajectories.values()])
            dims.setdefault(run["param"], set()).add(run["d"])
        # a law with its own sizes may be drawn at another d than the others (plans.token_law_figure_runs)
        dims = {param: ", ".join(map(str, sorted(sizes))) for param, sizes in dims.items()}
        fig = draw_token_laws_dynamics(sgd, law_flows, gaussian_flows, dims=dims,
                                       threshold=float(smk.params.threshold))
        job.save_figure(fig, "aimrepro paper 2 beyond the paper: tokens that are not Gaussian")
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics={"converged": True})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
