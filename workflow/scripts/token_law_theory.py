"""Rule token_law_theory: the SE of one hardmax point for one token law, d -> inf and finite d -> CSV + sidecar.

The science is ``aimrepro.paper1.token_laws.law_table`` (docs/paper1.md §13): the Gaussian
SE, the SE with the law's diagonal variance, and the finite-d shifts with their Monte-Carlo
errors (d = 0 is the d -> infinity row).  The law column is the path's.
"""

from _job import run_job

from aimrepro.model import TokenLaw
from aimrepro.paper1.token_laws import law_table
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        law = TokenLaw.parse(wc.law)
        table = law_table(wc.channel, int(wc.T), float(wc.rho), float(wc.alpha), [law],
                          [int(d) for d in wc.dims.split("-")], n_samples=int(wc.samples), seed=int(wc.seed))
        write_table(smk.output.table, {name: column for name, column in table.items() if name != "law"})
        diagnostics = {"shift_inf": float(table["shift"][0]),
                       "max_shift_se": float(max(table["shift_se"]))}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, seed=int(wc.seed), diagnostics=diagnostics,
                          extra_params={"law": law.to_dict()})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
