"""Rule tokens_se_curve: the SE curve of hardmax attention with T tokens through a Fisher table -> CSV + sidecar.

Wildcards name the curve (its kind, KINDS["tokens_se_curve"] in
aimrepro_workflow.kinds.paper1, paper1_theory.smk); the input is the table of
rule fisher_table, refitted here (the fit is deterministic: the same table gives
the same coefficients). Science: ``aimrepro.paper1.hardmax_tokens.se_curve``
(docs/paper1.md §3.6).
"""

from _job import run_job

import numpy as np

from aimrepro.numerics.grids import grid_values
from aimrepro.paper1.hardmax_tokens import FisherTable, curve_columns, fit_fisher_table, se_curve
from aimrepro.records.tables import read_table, write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        table = FisherTable.from_columns(read_table(smk.input.table), T=int(wc.T), seed=int(wc.seed))
        fit = fit_fisher_table(table, int(smk.params.degree))
        alphas = grid_values(wc.spacing, float(wc.lo), float(wc.hi), int(wc.n))
        job.log.info("hardmax T=%s rho=%s on %d alphas, fit chi2/dof = %.3g/%d", wc.T, wc.rho,
                     alphas.size, fit.chi2, fit.dof)
        columns = curve_columns(se_curve(fit, alphas, float(wc.rho)))
        write_table(smk.output.table, columns)
        diagnostics = {
            "converged": bool(np.all(columns["converged"])),
            "n_points": int(alphas.size),
            "n_unconverged": int(np.sum(~columns["converged"])),
            "n_extrapolated": int(np.sum(columns["extrapolated"])),
            "max_relative_stderr": float(np.max(columns["mmse_stderr"] / columns["mmse"])),
            "max_residual": float(np.max(columns["residual"])),
        }
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
