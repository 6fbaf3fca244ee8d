"""Which rules Snakemake's shared result cache may serve, and their cache key (workflow/rules/*.smk).

The registry says which kinds are cached (``Kind.cached``); each rule reads it.
"""

from __future__ import annotations

import re

from conftest import REPO

from aimrepro_workflow.kinds import KINDS

#: The expensive kinds (docs/benchmarks.md, "Cost model"): SGD, untied SGD, GD, AMP, the flows,
#: two-layer GAMP-RIE and GD, and the token-law GAMP-RIE, GD and SGD.
EXPENSIVE = {"sgd_run", "untied_sgd_run", "gd_run", "amp_run", "tokens_amp_run", "reference_flow",
             "flow_ensemble", "untied_theory", "two_layer_amp_run", "two_layer_gd_run",
             "token_law_amp", "token_law_gd", "token_law_sgd"}

RULE = re.compile(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", re.S | re.M)


def rule_bodies() -> dict[str, str]:
    return {name: body for smk in sorted((REPO / "workflow" / "rules").glob("*.smk"))
            for name, body in RULE.findall(smk.read_text())}


def test_exactly_the_expensive_kinds_are_cached():
    assert {kind.name for kind in KINDS.cached()} == EXPENSIVE
    # a cache entry is keyed by its path's values: only a kind with a path, one rule for all scales
    assert all(kind.path is not None and not kind.per_scale for kind in KINDS.cached())


def test_every_rule_takes_its_cache_line_from_its_kind():
    bodies = rule_bodies()
    assert len(bodies) >= 30
    lines = {name: re.findall(r"^    cache: (.*)$", body, re.M) for name, body in bodies.items()}
    cached = {name for name, found in lines.items() if found}
    assert cached == {kind.name for kind in KINDS.cached()}
    for name in cached:
        assert lines[name] == [f'shared_cache("{name}")'], name


def test_every_cached_rule_keys_its_entries_by_the_values_of_its_path():
    """Snakemake's cache key leaves the output path out: the wildcards must be a param, first."""
    for kind in KINDS.cached():
        params = re.search(r"^    params:\n((?:        .*\n)+)", rule_bodies()[kind.name], re.M)
        assert params is not None, kind.name
        assert params.group(1).startswith(f'        **cache_key("{kind.name}"),\n'), kind.name
