"""Rule two_layer_se_curve: the two-layer SE of one skip c along an alpha grid -> CSV + sidecar.

Wildcards name the curve and its table (KINDS["two_layer_se_curve"] in
aimrepro_workflow.kinds.paper1, paper1_theory.smk); the input is the table of rule
two_layer_table.  Science: ``aimrepro.paper1.two_layer.state_evolution.two_layer_curve``
(docs/paper1.md §14.4-14.6): per alpha the fixed point through the mean table, one per
table replicate (the standard errors) and one without the cross term.
"""

from _job import run_job

import numpy as np

from aimrepro.numerics.grids import grid_values
from aimrepro.paper1.two_layer.fisher import load_table
from aimrepro.paper1.two_layer.state_evolution import CURVE_COLUMNS, two_layer_curve
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        table = load_table(smk.input.table)
        alphas = grid_values(wc.spacing, float(wc.lo), float(wc.hi), int(wc.n))
        job.log.info("two layers c=%s rho=%s on %d alphas", wc.skip, wc.rho, alphas.size)
        curve = two_layer_curve(table, alphas)
        write_table(smk.output.table, {name: curve[name] for name in CURVE_COLUMNS})
        diagnostics = {
            "converged": bool(np.all(curve["converged"])),
            "n_points": int(alphas.size),
            "n_unconverged": int(np.sum(~curve["converged"])),
            "n_perfect": int(np.sum(curve["perfect"])),
            "n_outside_table": int(np.sum(curve["outside"])),
            "max_iterations": int(np.max(curve["iterations"])),
            "max_residual": float(np.max(curve["residual"])),
        }
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
