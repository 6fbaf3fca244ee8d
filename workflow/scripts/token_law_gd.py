"""Rule token_law_gd: K students of averaged GD on the replicates of one token law and d -> CSV + sidecar.

The science is ``aimrepro.paper1.token_law_runs.gd_replicates`` (datasets drawn in memory;
the students' initialisations do not depend on the law).
"""

from _job import run_job

from aimrepro.model import TokenLaw
from aimrepro.paper1.data import parse_link_token
from aimrepro.paper1.gd import GDSettings
from aimrepro.paper1.token_law_runs import gd_replicates
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        _, beta = parse_link_token(wc.link)
        table = gd_replicates(T=int(wc.T), rho=float(wc.rho), alpha=float(wc.alpha), d=int(wc.d),
                              law=TokenLaw.parse(wc.law), replicates=range(int(wc.n)),
                              base_seed=int(smk.params.base_seed), n_inits=int(wc.inits),
                              settings=GDSettings(**smk.params.optimizer), beta=beta)
        write_table(smk.output.table, table)
        diagnostics = {"n_diverged": [int(n) for n in table["n_diverged"]],
                       "converged": bool(sum(int(n) for n in table["n_diverged"]) == 0)}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, seed=int(smk.params.base_seed), diagnostics=diagnostics,
                          extra_params={"law": TokenLaw.parse(wc.law).to_dict()})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
