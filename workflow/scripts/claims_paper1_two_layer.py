"""Rule claims_paper1_two_layer: two attention layers, claims as measured numbers -> TSV fragment + sidecar.

Reads the two-layer Fisher tables, SE curves, GAMP-RIE trend runs and GD runs into one
:class:`aimrepro.claims.paper1_two_layer.TwoLayerInputs`; the measurements (thresholds on
the fibre integral, the c -> infinity limit, the trend's SE point) are
``aimrepro.claims.paper1_two_layer.paper1_two_layer_claims`` (docs/paper1.md §14).
"""

from _job import run_job

from aimrepro.claims.paper1_two_layer import TwoLayerInputs, paper1_two_layer_claims
from aimrepro.paper1.two_layer import amp, gd
from aimrepro.paper1.two_layer.fisher import load_table
from aimrepro.records.tables import read_table


def main(smk) -> None:
    with run_job(smk) as job:
        tables = {t["skip"]: load_table(path) for t, path in zip(smk.params.tables, smk.input.tables)}
        curves = {c["skip"]: read_table(path) for c, path in zip(smk.params.curves, smk.input.curves)}
        trend = None
        if smk.params.trend:
            runs_by_d = {}
            for run, path in zip(smk.params.trend, smk.input.trend):
                runs_by_d.setdefault(run["d"], []).append(amp.load_run_summary(path))
            first = smk.params.trend[0]
            trend = {"skip": first["skip"], "alpha": first["alpha"], "runs_by_d": runs_by_d}
        gd_runs = [{"skip": run["skip"], "alpha": run["alpha"], "d": run["d"], "n_inits": run["inits"],
                    **gd.load_run_summary(path)} for run, path in zip(smk.params.gd, smk.input.gd)]
        inputs = TwoLayerInputs(rho=float(smk.params.rho), seed=int(smk.config["seed"]), tables=tables,
                                curves=curves, threshold_skips=list(smk.params.figure_skips),
                                threshold_settings=dict(smk.params.threshold), trend=trend, gd=gd_runs)
        job.write_claims(paper1_two_layer_claims(inputs), "two-layer")


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
