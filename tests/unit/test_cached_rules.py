"""Which rules Snakemake's shared result cache may serve, and their cache key (workflow/rules/*.smk)."""

from __future__ import annotations

import re

from conftest import REPO

#: The expensive rules (docs/benchmarks.md, "Cost model"): SGD, untied SGD, GD, AMP, the flows.
CACHED = {"sgd_run", "untied_sgd_run", "gd_run", "amp_run", "tokens_amp_run", "reference_flow",
          "flow_ensemble", "untied_theory"}

RULE = re.compile(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", re.S | re.M)


def rule_bodies() -> dict[str, str]:
    return {name: body for smk in sorted((REPO / "workflow" / "rules").glob("*.smk"))
            for name, body in RULE.findall(smk.read_text())}


def test_exactly_the_expensive_rules_are_cached():
    bodies = rule_bodies()
    assert len(bodies) >= 30
    cached = {name for name, body in bodies.items() if re.search(r"^\s+cache: SHARED_CACHE$", body, re.M)}
    assert cached == CACHED


def test_every_cached_rule_keys_its_entries_by_the_values_of_its_path():
    """Snakemake's cache key leaves the output path out: the wildcards must be a param."""
    for name in CACHED:
        params = re.search(r"^    params:\n((?:        .*\n)+)", rule_bodies()[name], re.M)
        assert params is not None, name
        assert "        wildcards=path_values,\n" in params.group(1), name
