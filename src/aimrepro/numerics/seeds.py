"""The seeds of a table of replicates: one check for every function that runs several (both papers).

Its own module, imported only by the functions that take a list of seeds
(``aimrepro.paper2.theory_tables``, ``.untied.truncation_table``, both
``token_law_runs``), so that a change here reruns only their rules.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["check_seeds"]


def check_seeds(seeds: Iterable[int], name: str = "seeds") -> list[int]:
    """The replicate seeds as a list of ints; ValueError naming ``name`` unless they are distinct, >= 0
    and at least one."""
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError(f"{name} must be distinct integers >= 0, at least one, got {seeds}")
    return seeds
