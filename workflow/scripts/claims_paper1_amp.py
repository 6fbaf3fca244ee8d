"""Rule claims_paper1_amp: paper 1's AMP claims as measured numbers -> TSV fragment + sidecar.

Reads the AMP summaries; the measurements are ``aimrepro.claims.paper1_amp.paper1_amp_claims``.
"""

from _job import run_job

from aimrepro.claims.paper1_amp import paper1_amp_claims
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        curves = list(smk.params.curves)
        rows = paper1_amp_claims(curves, [read_table(c["path"]) for c in curves])
        job.write_claims(rows, "AMP")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
