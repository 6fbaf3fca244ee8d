# aimrepro: one config.yaml -> a DAG of cached, file-based steps -> every
# figure of the two AIM papers, each number traceable to its inputs.
# Architecture and conventions: docs/design.md.  Run from the repository root:
#     snakemake                          # quick scale, all cores (profiles/default)
#     snakemake --config scale=paper     # the papers' resolution

import sys
from pathlib import Path

from snakemake.utils import min_version

from aimrepro import preflight
from aimrepro.config import ConfigError, configured_scales, validate_config

min_version("9.0")

# The workflow layer is an installed package of the project; this directory's own
# copy comes first, so that a workflow runs the plan beside its rules.
sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "lib"))

from aimrepro_workflow import load_schema
from aimrepro_workflow.checks import check_config, check_plan
from aimrepro_workflow.plans import Plan
from aimrepro_workflow.report import build_note


# A config.yaml that is not YAML: one line with its line and column, not the parser's stack.
if problem := preflight.yaml_problem("config.yaml"):
    sys.exit(f"aimrepro: {problem}")


configfile: "config.yaml"


# Validate (and fill defaults) before anything is planned, then check the plan of
# the scale run against limits (its jobs, their memory, its core-hours), so that a
# bad value stops the run with one line naming the key, before any job starts.
# The rules read the same plan (PLAN), made once.
try:
    validate_config(config, load_schema())
    check_config(config)
    PLAN = Plan(config)
    check_plan(config, [config["scale"]], plan=PLAN)
except ConfigError as err:
    # sys.exit prints only the message: Snakemake would add a traceback.
    sys.exit(f"aimrepro: {err}")

# Where this scale writes must be writable (a real probe), before Snakemake looks at its
# files: a read-only mount or a file in a directory's place would otherwise end in a stack.
SCALE_DIRECTORIES = [Path("results") / config["scale"], Path("figures") / config["scale"]]
if problem := preflight.unwritable(SCALE_DIRECTORIES):
    sys.exit(f"aimrepro: {problem}")


report: "workflow/report/workflow.rst"


def report_build_note(shown):
    """The report's sentence on when and from which commits it and its results were made.

    Called by workflow/report/workflow.rst with the report's file records, so
    only when a report is built.  Snakemake gives the opening text nothing but
    the config, which must not carry a time or a commit (every job's config
    hash would change), so the template reaches this function through a file
    record's rule (``record.job.rule.module_globals``).
    """
    return build_note([record.path for record in shown], repository=workflow.basedir)


wildcard_constraints:
    scale="|".join(configured_scales(config)),


include: "workflow/rules/common.smk"
include: "workflow/rules/paper1_theory.smk"
include: "workflow/rules/paper1_simulations.smk"
include: "workflow/rules/paper2_dynamics.smk"
include: "workflow/rules/paper2_moments.smk"
include: "workflow/rules/paper2_untied.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/claims.smk"


localrules:
    all,


onstart:
    # The free disk covers what is still to write (the cost model's outputs of the
    # scale, less what is there), checked before the first job, not in a dry run.
    still_to_write = (COSTS.table(config["scale"])["total"]["disk_bytes"]
                      - preflight.bytes_present(SCALE_DIRECTORIES))
    if problem := preflight.disk_shortfall(".", max(still_to_write, 0.0)):
        sys.exit(f"aimrepro: {problem}")


rule all:
    """Every figure of the configured scale, and the claims table."""
    default_target: True
    input:
        PLAN.all_targets(config["scale"]),
