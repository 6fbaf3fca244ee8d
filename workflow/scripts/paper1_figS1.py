"""Rule paper1_figS1: hardmax attention with T = 2, 3, 4 tokens -> figures/{scale}/paper1_figS1.{pdf,png} + sidecar.

Beyond the paper (docs/paper1.md §3.6): Figure 1 left through the tabulated
SE (rule tokens_se_curve), checked at T = 2 against the exact channel (rule se_curve).
"""

from _job import run_job

import numpy as np

from aimrepro.figures.paper1 import se_curve_from_table
from aimrepro.figures.paper1_tokens import draw_figure_s1, t2_deviation, tokens_curve_from_table
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = [tokens_curve_from_table(read_table(c["path"]), T=c["T"], rho=c["rho"])
                  for c in smk.params.curves]
        exact = [se_curve_from_table(read_table(c["path"]), channel="hardmax", rho=c["rho"],
                                     x_column="alpha") for c in smk.params.exact]
        fig, n_unconverged = draw_figure_s1(curves, exact)
        job.save_figure(fig, "aimrepro paper 1 figure S1 (hardmax, T = 2, 3, 4 tokens)")
        exact_of = {c.rho: c for c in exact}
        deviations = [t2_deviation(c, exact_of[c.rho]) for c in curves if c.T == 2 and c.rho in exact_of]
        relative = {f"T{T}": float(max(np.max(c.mmse_stderr / c.mmse) for c in curves if c.T == T))
                    for T in sorted({c.T for c in curves})}
        diagnostics = {
            "converged": n_unconverged == 0,
            "n_unconverged_points": n_unconverged,
            "n_extrapolated_points": int(sum(c.extrapolated.sum() for c in curves)),
            "max_relative_stderr": relative,
            "t2_max_abs_deviation_in_stderr": (float(max(np.max(np.abs(d)) for d in deviations))
                                               if deviations else None),
        }
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar([smk.output.pdf, smk.output.png], diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
