# What every rule file uses: the plan of the config, the path specifications,
# the code inputs of a script and the outputs of a figure.  Planners, paths
# and checks are plain Python in workflow/lib/aimrepro_workflow (tested
# without Snakemake); the rule files only declare.

import os
import sys
from pathlib import Path

from aimrepro.backends import family_backend
from aimrepro_workflow import paths
from aimrepro_workflow.codeinputs import CodeLayout, ImportClosures, ImportListCache
from aimrepro_workflow.costs import CostModel
from aimrepro_workflow.plans import Plan, column

PLAN = Plan(config)
#: threads, mem_mb and runtime of every rule, from the cost model (docs/benchmarks.md, "Cost model")
COSTS = CostModel(config)

#: Where GD, GAMP-RIE and SGD compute (config `backend`, aimrepro.backends): one rule param
#: per kernel family, {name, dtype} with that family's float type (a change of one family's
#: dtype reruns its jobs only), and one GPU for each of their jobs when it is torch,
#: as the Slurm executor plugin's `gpu` resource (docs/slurm.md).
BACKEND = {family: family_backend(config["backend"], family) for family in ("gd", "sgd", "amp")}
BACKEND_GPUS = 1 if config["backend"]["name"] == "torch" else 0

CODE_LAYOUT = CodeLayout(
    package_root=Path(workflow.basedir) / "src",
    package="aimrepro",
    helper_dir=Path(workflow.basedir) / "workflow" / "scripts",
)
#: The scripts' import closures; the files' import lists are kept on disk between
#: Snakemake starts (a third of a second of parsing each time otherwise).
SCRIPT_CLOSURES = ImportClosures(
    CODE_LAYOUT, ImportListCache(Path(workflow.basedir) / ".snakemake" / "aimrepro-import-lists.json"))


def script_code(name):
    """The workflow script ``name`` and every source file it runs (its import closure).

    Snakemake reruns a job when its script changes but does not follow
    imports: these are the job's ``code`` inputs, so editing the SE code
    reruns the SE curves and their figures, and nothing else.
    """
    return [os.path.relpath(path)
            for path in SCRIPT_CLOSURES(CODE_LAYOUT.helper_dir / name)]


def figure_outputs(name, paper, subcategory):
    """PDF, PNG (shown in the report with its caption) and sidecar of one figure."""
    figure = paths.figure_paths("{scale}", name)
    return {
        "pdf": figure["pdf"],
        "png": report(figure["png"], caption=f"../report/{name}.rst", category=paper,
                      subcategory=subcategory),
        "sidecar": figure["json"],
    }


def figure_log(name):
    return f"results/{{scale}}/logs/figures/{name}.log"


#: Paper 2's science section ({} in a config without paper 2: its rules are
#: defined but no target asks for them).
P2 = config.get("paper2", {})


def path_values(wildcards, output):
    """The values a job's output path names (its wildcards), as a param of the rules marked ``cache``.

    Snakemake's shared result cache (``snakemake --cache``) keys a job by its
    script, params, non-generated inputs (here the code files) and upstream
    jobs, not by its output path, in which this pipeline writes every
    parameter: without them as a param, two seeds of an SGD run would share a
    cache entry.  Named ``wildcards``, the param adds nothing to the sidecar
    (whose ``params.wildcards`` already holds them).  It takes ``output`` so
    that Snakemake counts it as derived from the output path, which it is:
    adding it does not rerun existing results (docs/design.md, "Shared result
    cache").
    """
    return dict(wildcards.items())


#: The `cache:` of the expensive rules, whose results Snakemake's shared cache may serve
#: (`snakemake --cache`, docs/design.md "Shared result cache"): true when the run asks for the
#: cache.  Not always true: Snakemake would print a line per such rule at every start without it.
SHARED_CACHE = workflow.workflow_settings.cache is not None

# `snakemake --cache` without a cache directory: Snakemake 9.27 warns that it will not
# cache, then fails in the first cached job; stop before any job instead.
if SHARED_CACHE and not os.environ.get("SNAKEMAKE_OUTPUT_CACHE"):
    sys.exit("aimrepro: --cache needs the shared cache directory in the environment variable "
             "SNAKEMAKE_OUTPUT_CACHE (docs/design.md, \"Shared result cache\")")
