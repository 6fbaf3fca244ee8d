"""The workflow layer: result kinds, plans, costs and checks, testable without Snakemake.

An installed package of the project (pyproject.toml), beside the science
package ``aimrepro``: the Snakefile, ``aimrepro cost`` and the tests import it.

:mod:`~aimrepro_workflow.kinds`
    The registry of result kinds: each kind of job (an SE curve, an AMP run,
    an untied SGD run, a figure, ...) declared once, with its result path,
    typed parameters, the config keys it reads, its sizes and its work.
:mod:`~aimrepro_workflow.plans`
    From the config, every job of a scale (typed jobs of those kinds) and what
    each figure and claims topic reads.
:mod:`~aimrepro_workflow.costs`, :mod:`~aimrepro_workflow.prices`
    What each job costs (CPU seconds, memory, disk): the rules' threads,
    mem_mb and runtime, and ``aimrepro cost``; the calibrated prices.
:mod:`~aimrepro_workflow.checks`
    The config checks beyond the schema: cross-key checks, and the plan of a
    scale against ``limits`` (jobs, memory, core-hours).
:mod:`~aimrepro_workflow.paths`
    How a result is named: pattern, constraints, log, format and parse.
:mod:`~aimrepro_workflow.codeinputs`
    Each rule's code inputs: the import closure of its script.
:mod:`~aimrepro_workflow.report`
    The report's sentence on when and from which commits it was built.

The rule files in ``workflow/rules/`` only declare: they take their
patterns, inputs, params and resources from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The config schema (types, defaults, ranges of every key), beside this package in workflow/.
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


def load_schema() -> dict[str, Any]:
    """The config schema, as the Snakefile validates with it."""
    import yaml

    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        return yaml.safe_load(handle)
