"""Rule claims_paper1_gd: paper 1's GD claims as measured numbers -> TSV fragment + sidecar.

Reads the GD summaries; the measurements are ``aimrepro.gd_claims.paper1_gd_claims``.
"""

from _job import run_job

from aimrepro.claims import write_claims
from aimrepro.gd_claims import paper1_gd_claims
from aimrepro.provenance import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = list(smk.params.curves)
        rows = paper1_gd_claims(curves, [read_table(c["path"]) for c in curves])
        write_claims(smk.output.table, rows)
        n_failed = sum(not row.passed for row in rows)
        job.log.info("%d GD claims, %d not reproduced", len(rows), n_failed)
        job.write_sidecar(smk.output.table, diagnostics={"n_claims": len(rows), "n_failed": n_failed})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
