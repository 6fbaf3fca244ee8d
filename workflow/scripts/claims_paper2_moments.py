"""Rule claims_paper2_moments: the moment-hierarchy claims of paper 2 -> TSV fragment + sidecar.

Reads the rule's inputs into one :class:`aimrepro.claims.paper2_moments.MomentsInputs`;
the measurements are ``aimrepro.claims.paper2_moments.paper2_moments_claims``.
"""

from _job import run_job
from _moment_inputs import load_replicates

from aimrepro.claims.paper2_moments import MomentFigure, MomentsInputs, paper2_moments_claims
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        s6 = {table["weight_decay"]: read_table(table["path"]) for table in smk.params.s6}
        figure1 = load_replicates(smk.params.figure1, "flow_path")
        figure4 = load_replicates(smk.params.figure4, "exact_path")
        short = smk.params.short_times
        rows = paper2_moments_claims(MomentsInputs(
            s6_tables=s6, s6_short_time=short["figureS6"], s6_matrix_scale=smk.params.matrix_scale,
            figure1=MomentFigure(**figure1, orders=smk.params.orders["figure1"], short_time=short["figure1"]),
            figure4=MomentFigure(**figure4, orders=smk.params.orders["figure4"], short_time=short["figure4"]),
            figure4_radius=read_table(smk.input.radius)))
        job.write_claims(rows, "moment-hierarchy")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
