# What every rule file uses: the plan of the config (PLAN, made and checked by
# the Snakefile), the registry of result kinds, the code inputs of a script and
# the outputs of a figure.  Kinds, plans, costs and checks are plain Python in
# workflow/lib/aimrepro_workflow (tested without Snakemake); the rule files only
# declare.

import os
import sys
from pathlib import Path

from aimrepro.backends import family_backend
from aimrepro_workflow import paths
from aimrepro_workflow.codeinputs import CodeLayout, ImportClosures, ImportListCache
from aimrepro_workflow.costs import CostModel
from aimrepro_workflow.kinds import KINDS
from aimrepro_workflow.kinds.outputs import CLAIM_FRAGMENT
from aimrepro_workflow.kinds.paper1 import TWO_LAYER_TEST_SAMPLES

#: threads, mem_mb and runtime of every rule, from the cost model (docs/benchmarks.md, "Cost model")
COSTS = CostModel(config, PLAN)

#: Where GD, GAMP-RIE and SGD compute (config `backend`, aimrepro.backends), and one GPU
#: for each of their jobs when it is torch, as the Slurm executor plugin's `gpu` resource
#: (docs/slurm.md).
BACKEND_GPUS = 1 if config["backend"]["name"] == "torch" else 0


def job_backend(rule, family):
    """The `backend` param of a job of ``rule``: {name, dtype}, with the float type of kernel
    family ``family`` that the job reads at its scale (the preset's `dtype`, else `backend.dtype`;
    kinds.dtype_read), so a change of one family's float type reruns that family's jobs only."""
    return lambda wildcards: {**family_backend(config["backend"], family),
                              "dtype": PLAN.job_of(rule, wildcards).values["dtype"]}

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


def result(name, **fixed):
    """Output, log and wildcard constraints of the rule of result kind ``name`` (its path, aimrepro_workflow.kinds).

    ``fixed`` fixes fields (a dataset rule's scale); ``wrap`` marks the result (``temp``).
    """
    spec = KINDS[name].path
    wrap = fixed.pop("wrap", lambda pattern: pattern)
    return {"output": spec.outputs(wrap=wrap, **fixed), "log": spec.log(**fixed),
            "constraints": spec.constraints()}


def job_inputs(rule):
    """The data inputs of a rule's job, from its kind (the dataset of a run, the runs of a summary)."""
    return lambda wildcards: PLAN.job_of(rule, wildcards).inputs()


def needs_inputs(name):
    """The results figure or claims job ``name`` reads, by input name (Plan.needs)."""
    return lambda wildcards: PLAN.needs(name, wildcards.scale).inputs


def needs_params(name):
    """The planned params of figure or claims job ``name`` (Plan.needs), one callable per param."""
    return {key: (lambda wildcards, key=key: PLAN.needs(name, wildcards.scale).params[key])
            for key in PLAN.needs_params(name)}


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
    """The values a job's output path names (its wildcards), the cache key of a cached kind's job.

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


#: Whether this run asks for the shared result cache (`snakemake --cache`, docs/design.md
#: "Shared result cache").  Not always true for the cached kinds: Snakemake would print a
#: line per such rule at every start without it.
SHARED_CACHE = workflow.workflow_settings.cache is not None

# `snakemake --cache` without a cache directory: Snakemake 9.27 warns that it will not
# cache, then fails in the first cached job; stop before any job instead.
if SHARED_CACHE and not os.environ.get("SNAKEMAKE_OUTPUT_CACHE"):
    sys.exit("aimrepro: --cache needs the shared cache directory in the environment variable "
             "SNAKEMAKE_OUTPUT_CACHE (docs/design.md, \"Shared result cache\")")
# `--cache` takes rule names: targets written after it become "rules" and the run plans
# every figure instead of the targets; a name with a path or a suffix is such a target.
_CACHE_TARGETS = [name for name in workflow.workflow_settings.cache or []
                  if "/" in name or os.path.splitext(name)[1]]
if _CACHE_TARGETS:
    sys.exit(f"aimrepro: --cache takes rule names, not targets ({', '.join(_CACHE_TARGETS)}): "
             f"give the targets before it (snakemake TARGET ... --cache)")


def shared_cache(name):
    """The `cache:` of kind ``name``'s rule: true when the run asks for the cache and the kind is cached (Kind.cached)."""
    return SHARED_CACHE and KINDS[name].cached


def cache_key(name):
    """The params that key a cached kind's entries (its path's values, :func:`path_values`); none otherwise."""
    return {"wildcards": path_values} if KINDS[name].cached else {}
