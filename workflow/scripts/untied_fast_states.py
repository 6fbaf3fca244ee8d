"""Rule untied_fast_states: fast state, dichotomy and threshold against the teacher mean -> CSV + sidecar.

``aimrepro.paper2.untied.dichotomy.fast_state_table`` at the d -> infinity initial
state of the problem (``limiting_state``), on n teacher means from lo to hi.
"""

import numpy as np
from _job import run_job

from aimrepro.paper2.population import Potential
from aimrepro.paper2.sgd import ProblemSpec
from aimrepro.paper2.untied.dichotomy import fast_state_table
from aimrepro.paper2.untied.slow import limiting_state
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec("untied", wc.link, 1, 100, rho=float(wc.rho),
                           student_rho=float(wc.rho), normalisation=wc.normalisation,
                           init_scale=float(wc.sU), init_scale_v=float(wc.sV))
        limit = limiting_state(spec)
        table, diagnostics = fast_state_table(
            Potential(spec.loss(), 1), np.linspace(float(wc.lo), float(wc.hi), int(wc.n)),
            v1=limit["v1"], v2=limit["v2"], rate=limit["rate"])
        write_table(smk.output.table, table)
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics)


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
