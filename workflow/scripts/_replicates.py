"""Replicate tables of paper 2's theory rules: n initial states, one table, one sidecar.

Shared by the scripts of rules flow_ensemble, tied_velocity, untied_velocity,
truncation_radius and untied_truncation, whose wildcards name the replicates
by their first seed (``seed``) and their number (``n``), and the sizes of a
table over d by ``dims`` (``100-200-400``).
"""

from dataclasses import asdict

from aimrepro.records.tables import write_table


def replicate_seeds(wc) -> range:
    """The replicates' seeds: ``n`` consecutive seeds from ``seed``."""
    return range(int(wc.seed), int(wc.seed) + int(wc.n))


def replicate_dims(wc) -> list[int]:
    """The sizes of wildcard ``dims``, in order."""
    return [int(d) for d in wc.dims.split("-")]


def write_replicate_table(job, path, table, diagnostics, spec, seeds: range) -> None:
    """The table at ``path`` and its sidecar, which records the problem and every seed."""
    write_table(path, table)
    job.log.info("diagnostics %s", diagnostics)
    job.write_sidecar(path, diagnostics=diagnostics, seed=seeds[0],
                      extra_params={"spec": asdict(spec), "seeds": list(seeds)})
