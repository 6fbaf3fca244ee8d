"""Rule untied_theory: the theory of one untied replicate -> CSV trajectory + sidecar.

kind ``flow``: the population flow of U, V at the run's d with the fast-phase
mean (``aimrepro.paper2.untied.slow.untied_reference``); kind ``limit``: the
slaved d -> infinity slow flow (``aimrepro.paper2.untied.slow.slow_limit``).
Both start from the replicate's own initial state.
"""

import time
from dataclasses import asdict

from _job import run_job
from _untied_wildcards import untied_spec, untied_stop, untied_times

from aimrepro.paper2.untied.slow import slow_limit, untied_reference
from aimrepro.records.tables import write_table


def main(smk) -> None:
    with run_job(smk) as job:
        wc = smk.wildcards
        spec = untied_spec(wc)
        cpu_start = time.process_time()
        if wc.kind == "flow":
            method, rtol = wc.method.lstrip("_").split("-", 1)
            trajectory, diagnostics = untied_reference(
                spec, int(wc.seed), untied_times(wc), weight_decay=float(wc.wd), method=method,
                rtol=float(rtol), stop_overlap=untied_stop(wc))
        else:
            trajectory, diagnostics = slow_limit(spec, int(wc.seed), untied_times(wc),
                                                 weight_decay=float(wc.wd))
        diagnostics["cpu_seconds"] = time.process_time() - cpu_start
        write_table(smk.output.table, trajectory.columns())
        job.log.info("diagnostics %s", diagnostics)
        job.write_sidecar(smk.output.table, diagnostics=diagnostics, seed=int(wc.seed),
                          extra_params={"spec": asdict(spec)})


if __name__ == "__main__":
    main(snakemake)  # noqa: F821 -- injected by Snakemake's script: directive
