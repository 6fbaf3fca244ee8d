"""Rule se_curve: one state-evolution curve -> CSV table + sidecar.

Wildcards name the curve (its kind, KINDS["se_curve"] in
aimrepro_workflow.kinds.paper1, paper1_theory.smk); the science is
``aimrepro.paper1.state_evolution.se_table``.
"""

import math

from _job import run_job

from aimrepro.numerics.grids import grid_values
from aimrepro.records.tables import write_table
from aimrepro.paper1.state_evolution import se_table


def parse_rho(text: str) -> float:
    """Path spelling of rho -> float: ``0`` is the rho -> 0 limit, ``inf`` rho -> infinity."""
    return math.inf if text == "inf" else float(text)


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        x = grid_values(wc.spacing, float(wc.lo), float(wc.hi), int(wc.n))
        job.log.info("%s T=%s rho=%s on %d %s points", wc.channel, wc.T, wc.rho, x.size, wc.axis)
        table = se_table(wc.channel, int(wc.T), parse_rho(wc.rho), wc.axis, x,
                         beta=smk.params.beta)
        write_table(smk.output.table, table.columns())
        diagnostics = table.diagnostics()
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics,
                          extra_params={"solver": table.settings})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
