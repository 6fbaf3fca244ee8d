"""Rule se_generalisation: one generalisation-error curve through the SE -> CSV table + sidecar.

Wildcards name the curve (its kind, KINDS["se_generalisation"] in
aimrepro_workflow.kinds.paper1, paper1_theory.smk); the science is
``aimrepro.paper1.generalisation.generalisation_curve`` (softmax at beta = 1, or
the corrected hardmax channel).
"""

from _job import run_job

from aimrepro.numerics.grids import grid_values
from aimrepro.paper1.channels import make_channel
from aimrepro.paper1.generalisation import generalisation_curve
from aimrepro.paper1.thresholds import alphas_from_axis
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        T, rho = int(wc.T), float(wc.rho)
        x = grid_values(wc.spacing, float(wc.lo), float(wc.hi), int(wc.n))
        job.log.info("%s T=%d rho=%g on %d %s points", wc.channel, T, rho, x.size, wc.axis)
        beta = 1.0 if wc.channel == "softmax" else None
        curve = generalisation_curve(make_channel(wc.channel, T=T, beta=beta),
                                     alphas_from_axis(wc.axis, x, rho=rho, T=T), rho)
        write_table(smk.output.table, {wc.axis: x, **curve.columns()} if wc.axis != "alpha"
                    else curve.columns())
        n_bad = int((~curve.se_converged).sum())
        job.log.info("%d of %d SE points unconverged", n_bad, x.size)
        job.write_sidecar(smk.output.table, diagnostics={"converged": n_bad == 0, "n_unconverged": n_bad},
                          extra_params={"settings": curve.settings})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
