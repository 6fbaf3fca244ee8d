"""Rule token_law_sgd: paper 2 on one token law, n replicates: SGD and both flows -> .npz + sidecar.

The science is ``aimrepro.paper2.token_law_runs.law_replicates`` (docs/paper2.md §10): per
replicate the SGD run on the law's tokens, the Gaussian flow and the flow of the law's loss
from its initial state, and the weak-recovery summary the claims read.
"""

from dataclasses import asdict

from _job import run_job

from aimrepro.model import TokenLaw
from aimrepro.paper2.sgd import ProblemSpec, SGDSettings
from aimrepro.paper2.token_law_runs import law_replicates, save_law_replicates


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = ProblemSpec(wc.param, wc.link, int(wc.T), int(wc.d), rho=float(wc.rho),
                           normalisation=wc.normalisation, tokens=TokenLaw.parse(wc.law))
        settings = SGDSettings(lr=float(wc.lr), batch=int(wc.B), horizon=float(wc.horizon),
                               n_records=int(wc.records), stop_overlap=None if wc.stop == "none" else float(wc.stop))
        seeds = range(int(wc.seed), int(wc.seed) + int(wc.n))
        summaries, trajectories = law_replicates(spec, settings, seeds, threshold=float(smk.params.threshold))
        save_law_replicates(smk.output.run, summaries, trajectories)
        diagnostics = {"blew_up": sum(bool(s["blew_up"]) for s in summaries),
                       "sgd_t_wr": [s["sgd_t_wr"] for s in summaries],
                       "gaussian_flow_t_wr": [s["gaussian_flow_t_wr"] for s in summaries],
                       "law_flow_t_wr": [s["law_flow_t_wr"] for s in summaries]}
        job.log.info("diagnostics %s", diagnostics)
        spec_record = {**asdict(spec), "tokens": spec.tokens.to_dict()}
        job.write_sidecar(smk.output.run, seed=seeds[0], diagnostics=diagnostics,
                          extra_params={"spec": spec_record, "settings": asdict(settings), "seeds": list(seeds)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
