"""Rule claims_paper1_token_laws: GAMP-RIE and GD on tokens that are not Gaussian -> TSV fragment + sidecar.

Reads the replicate tables of rules token_law_amp and token_law_gd and the finite-d theory of
rule token_law_theory; the rows (and the SE they are judged against) are
``aimrepro.claims.paper1_token_laws.paper1_token_laws_claims``.
"""

import numpy as np
from _job import run_job
from _token_law_tables import amp_tables, gd_tables

from aimrepro.claims.paper1_token_laws import paper1_token_laws_claims
from aimrepro.records.tables import read_table


def theory_of(point, theories) -> dict | None:
    """The ``token_laws.law_table`` of one point: the rows of each of its laws' tables, or None."""
    tables = [(t["law"], read_table(t["path"])) for t in theories if t["point"] == point["name"]]
    if not tables:
        return None
    columns = {"law": np.concatenate([np.full(len(table["d"]), law) for law, table in tables])}
    for name in ("d", "gaussian_se", "law_se", "shift", "shift_se"):
        columns[name] = np.concatenate([table[name] for _, table in tables])
    return columns


def main(smk) -> None:
    with run_job(smk) as job:
        points = [p for p in smk.params.points if p["dims"]]
        tables = amp_tables(points, [r for r in smk.params.runs if r["point"] in {p["name"] for p in points}])
        theory = [theory_of(point, smk.params.theory) for point in points]
        gd_point = smk.params.gd_point
        rows = paper1_token_laws_claims(points, tables, theory, gd_point=gd_point,
                                        gd_tables=gd_tables(smk.params.gd_runs) if gd_point else None)
        job.write_claims(rows, "paper 1 token-law")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
