"""Rule two_layer_table: the two-layer Fisher table of one skip c -> .npz + sidecar.

Wildcards name the table (its kind, KINDS["two_layer_table"] in
aimrepro_workflow.kinds.paper1, paper1_theory.smk); the science is
``aimrepro.paper1.two_layer.fisher.fisher_table`` (docs/paper1.md §14.4, §14.6).
The table's CPU time goes to the sidecar, not the file, which stays the same bytes.
"""

import dataclasses
import math

from _job import run_job

from aimrepro.paper1.two_layer.fisher import estimated_table_seconds, fisher_table, save_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        settings = {"nodes": int(wc.nodes), "log2_samples": int(wc.log2_samples), "replicates": int(wc.replicates)}
        skip, seed = float(wc.skip), int(wc.seed)
        job.log.info("c=%g rho=%s %s seed %d, estimated %.3g CPU s", skip, wc.rho, settings, seed,
                     estimated_table_seconds(skip, **settings))

        def progress(done, total):
            if done % max(1, total // 10) == 0:
                job.log.info("%d/%d nodes", done, total)

        table = fisher_table(float(wc.rho), skip, seed=seed, progress=progress, **settings)
        save_table(smk.output.table, dataclasses.replace(table, cpu_seconds=math.nan))
        diagnostics = {"cpu_seconds": table.cpu_seconds, "quadrature_check": table.quadrature_check(),
                       "estimated_seconds": estimated_table_seconds(skip, **settings)}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=seed)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
