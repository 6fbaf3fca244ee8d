"""Rule fisher_table: the Fisher table F_T(m) of hardmax attention with T tokens -> CSV + sidecar.

Wildcards name the table (its kind, KINDS["fisher_table"] in
aimrepro_workflow.kinds.paper1, paper1_theory.smk); the science is
``aimrepro.paper1.hardmax_tokens`` (docs/paper1.md §3.6). The sidecar's
diagnostics hold the fit (``FisherFit.to_dict``) and the table's cost.
"""

from _job import run_job

import numpy as np

from aimrepro.paper1.hardmax_tokens import (fisher_table, fit_fisher_table, table_grid,
                                            table_samples)
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        T, seed = int(wc.T), int(wc.seed)
        x = table_grid(int(wc.nodes), float(wc.x_min))
        n_samples = table_samples(x, int(wc.nref))
        job.log.info("T=%d: %d nodes, %d samples in all, seed %d", T, x.size, int(n_samples.sum()), seed)
        table = fisher_table(T, x, n_samples, seed, first_block=int(smk.params.first_block))
        fit = fit_fisher_table(table, int(wc.degree))
        columns = table.columns()
        # CPU times vary from run to run: the sidecar keeps them, the table stays the same bytes
        node_seconds = columns.pop("seconds")
        write_table(smk.output.table, columns)
        diagnostics = {
            "fit": fit.to_dict(), "chi2_per_dof": fit.chi2 / fit.dof if fit.dof else None,
            "error_scale": fit.error_scale, "cpu_seconds": float(np.sum(node_seconds)),
            "node_cpu_seconds": [float(v) for v in node_seconds],
            "n_samples": int(np.sum(table.n_samples)), "n_dropped": int(np.sum(table.n_dropped)),
            "max_relative_stderr": float(np.max(table.stderr / table.value)),
        }
        job.log.info("diagnostics %s", {k: v for k, v in diagnostics.items() if k != "fit"})
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=seed)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
