"""Rule token_law_amp: GAMP-RIE on the replicates of one token law, point and d -> CSV + sidecar.

The science is ``aimrepro.paper1.token_law_runs.amp_replicates`` (each dataset drawn in
memory from the config's seed: the replicates of two laws share the teacher and the normals).
"""

from _job import run_job

from aimrepro.model import TokenLaw
from aimrepro.paper1.data import parse_link_token
from aimrepro.paper1.token_law_runs import amp_replicates, amp_table_to_columns
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc, solver = smk.wildcards, smk.params.solver
        channel, beta = parse_link_token(wc.channel)
        table = amp_replicates(channel, T=int(wc.T), rho=float(wc.rho), alpha=float(wc.alpha), d=int(wc.d),
                               law=TokenLaw.parse(wc.law), replicates=range(int(wc.n)),
                               base_seed=int(smk.params.base_seed), beta=beta, damping=solver["damping"],
                               tol=solver["tol"], max_iter=solver["max_iter"])
        write_table(smk.output.table, amp_table_to_columns(table))
        statuses = [str(s) for s in table["status"]]
        diagnostics = {"converged": all(s == "converged" for s in statuses),
                       "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
                       "iterations": [int(i) for i in table["iterations"]]}
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, seed=int(smk.params.base_seed), diagnostics=diagnostics,
                          extra_params={"law": TokenLaw.parse(wc.law).to_dict()})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
