"""Shared test helpers: paths, commands, repository copies, tiny configs and Snakemake's plans.

Test modules import what they need from here (``from conftest import ...``) and
never from one another.

Workflow tests drive the Snakemake command line in a subprocess (its Python
API ignores profiles) inside a temporary copy of the repository, so that
they never touch the developer's results/ or .snakemake/.  What Snakemake
plans is read from ``snakemake --summary``, a tab-separated table of every
output file of the DAG with its rule and whether it would be rebuilt
(:func:`snakemake_plan`), not from the human-readable dry-run text.  The plans
of the repository's own config are computed once per session
(:func:`quick_plan`, :func:`referee_plan`, :func:`paper_plan`).
"""

from __future__ import annotations

import collections
import copy
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Test matrices are small (d <= 400): one BLAS thread is fastest, and on a shared
# 2-core machine a multithreaded BLAS oversubscribes the cores (an untied SGD test
# took 81 s instead of 7 s at load 6).  Set before numpy is first imported.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

#: The workflow's plain-Python package (plans, paths, checks), importable by the tests.
workflow_lib = REPO / "workflow" / "lib"
if str(workflow_lib) not in sys.path:
    sys.path.insert(0, str(workflow_lib))

#: What a workflow run needs from the repository: the rules list
#: src/aimrepro/*.py as inputs, so src/ is copied too (the package itself is
#: imported from the editable install); the license, citation, README and
#: pyproject go into a crate of its results.
WORKFLOW_FILES = ("Snakefile", "config.yaml", "workflow", "profiles", "src", ".gitignore",
                  "LICENSE", "CITATION.cff", "README.md", "pyproject.toml")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".snakemake")

CONFIG_SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())


# --- files and commands -------------------------------------------------------------


def sha256(path: Path) -> str:
    """The sha256 of a file's bytes, as the sidecars record it."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def executable(name: str) -> str:
    """An executable of the venv running the tests (snakemake, aimrepro)."""
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed next to {sys.executable}")
    return str(path)


def run_cli(*args: str, module: bool = False, cwd: Path | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess:
    """The ``aimrepro`` command line in a subprocess, as a user runs it.

    By default the venv's ``aimrepro`` script; with ``module`` as
    ``python -m aimrepro.cli`` (both entry points must behave the same).
    """
    command = [sys.executable, "-m", "aimrepro.cli"] if module else [executable("aimrepro")]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, check=False)


def result_bytes(workdir: Path) -> dict[str, bytes]:
    """Every file of results/ and the pixels of each figure.

    Sidecars and logs carry times, and a figure's metadata the commit of
    its copy of the repository: those are left out.
    """
    from matplotlib.image import imread

    files = {}
    for path in sorted((workdir / "results").rglob("*")):
        if path.is_file() and path.suffix not in (".json", ".log"):
            files[str(path.relative_to(workdir))] = path.read_bytes()
    for path in sorted((workdir / "figures").rglob("*.png")):
        files[str(path.relative_to(workdir))] = imread(path).tobytes()
    return files


def printed_remedy(text: str, marker: str) -> str:
    """The command a refusal or a failed check prints after ``marker`` (to the end of its line)."""
    lines = [line.split(marker, 1)[1].strip() for line in text.splitlines() if marker in line]
    assert lines, f"no {marker!r} in:\n{text[-3000:]}"
    assert len(set(lines)) == 1, lines
    return lines[0]


def run_remedy(workdir: Path, command: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    """A printed remedy run verbatim by a shell in ``workdir``, with the venv's commands on PATH."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(command, shell=True, cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def run_main(capsys, args: list[str]) -> subprocess.CompletedProcess:
    """``aimrepro.cli.main(args)`` in this process, as a CompletedProcess (status, stdout, stderr)."""
    from aimrepro import cli

    try:
        status = cli.main(args)
    except SystemExit as stop:
        status = stop.code
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, status, captured.out, captured.err)


def changed(base: list[str], **options: str) -> list[str]:
    """A command line with options replaced or added (``lr="0.1"`` sets ``--lr 0.1``)."""
    args = list(base)
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    return args


def assert_usage_error(done: subprocess.CompletedProcess, names) -> None:
    """A refused command line: exit 2, empty stdout, one stderr line naming each of ``names``."""
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    for name in names:
        assert name in lines[0]



def assert_same_results(a: Path, b: Path) -> list[dict]:
    """``aimrepro diff --json A B``: every result in both trees, with the same bytes; returns them.

    A figure embeds the commit of its copy of the repository (two copies
    committed at different times differ): its bytes may differ, its drawing
    may not (status ``close``).
    """
    compared = run_cli("diff", "--json", str(a), str(b), timeout=300)
    assert compared.returncode == 0, compared.stdout[-4000:]
    results = json.loads(compared.stdout)["results"]
    for result in results:
        allowed = {"same", "close"} if result["path"].startswith("figures/") else {"same"}
        assert result["status"] in allowed, result
    return results


def git(repository: Path, *args: str) -> str:
    """Run git in ``repository`` with a test identity (no signing) and return its stripped stdout."""
    command = ["git", "-c", "user.name=aimrepro-tests", "-c", "user.email=tests@invalid",
               "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, cwd=repository, check=True, capture_output=True,
                          text=True).stdout.strip()



#: How docutils reports a message of any level in a log or a page: "<string>:1: (ERROR/3) ...".
DOCUTILS_MESSAGE = re.compile(r"\((?:DEBUG|INFO|WARNING|ERROR|SEVERE)/\d\)")

# --- repository copies and Snakemake ------------------------------------------------------


def copy_repository(destination: Path, config: dict | None = None) -> Path:
    """Copy the workflow files into ``destination`` and commit them in a fresh git repo.

    ``config`` replaces the copy's config.yaml before the commit.  The commit
    makes the recorded provenance (commit, dirty flag) testable.
    """
    destination.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=_IGNORED)
        elif source.exists():
            shutil.copy2(source, destination / name)
    if config is not None:
        (destination / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    if shutil.which("git"):
        git(destination, "init", "-q")
        git(destination, "add", "-A")
        git(destination, "commit", "-q", "-m", "test copy")
    return destination


def run_snakemake(workdir: Path, *args: str, check: bool = True, timeout: float = 1200,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the venv's ``snakemake`` in ``workdir`` (with ``env`` added to the environment).

    On failure with ``check``, the test fails showing Snakemake's output.
    """
    completed = subprocess.run(
        [executable("snakemake"), *args], cwd=workdir, capture_output=True, text=True,
        timeout=timeout, check=False, env=None if env is None else {**os.environ, **env},
    )
    if check and completed.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} exited {completed.returncode}\n"
                    f"--- stdout ---\n{completed.stdout[-5000:]}\n"
                    f"--- stderr ---\n{completed.stderr[-5000:]}")
    return completed


def config_error_lines(done: subprocess.CompletedProcess) -> list[str]:
    """The lines of a refused run's stderr that report an invalid config."""
    return [line for line in done.stderr.splitlines() if "invalid config" in line]


class edited_config:
    """Context: the copy's config.yaml replaced by ``config`` (restored on exit).

    Replacing, not ``--configfile``: Snakemake merges a config file given on
    the command line into config.yaml, so a smaller config would inherit keys.
    """

    def __init__(self, workdir: Path, edit) -> None:
        self.path, self.edit = workdir / "config.yaml", edit

    def __enter__(self) -> dict:
        self.original = self.path.read_text()
        changed = yaml.safe_load(self.original)
        self.edit(changed)
        self.path.write_text(yaml.safe_dump(changed, sort_keys=False))
        return changed

    def __exit__(self, *exc) -> None:
        self.path.write_text(self.original)


# --- what Snakemake plans: `snakemake --summary` ----------------------------------------

#: The columns of ``snakemake --summary`` (Snakemake 9, ``DAG.summary``).
SUMMARY_COLUMNS = ("output_file", "date", "rule", "log-file(s)", "status", "plan")
_PLAN_VALUES = {"update pending": True, "no update": False}


@dataclass(frozen=True)
class PlannedJob:
    """One job of the DAG: its rule, its outputs (the result first) and their status."""

    rule: str
    outputs: tuple[str, ...]
    statuses: tuple[str, ...]
    pending: bool

    @property
    def output(self) -> str:
        """The job's first output (the result, or a figure's PDF)."""
        return self.outputs[0]


class SnakemakePlan:
    """Every job of a DAG as ``snakemake --summary`` lists it.

    The summary has one row per output file, with the file's rule and
    whether its job would run ("update pending") or not ("no update").  Rows
    are grouped into jobs by the project's convention that each job writes
    exactly one sidecar, ``<stem>.json``, next to outputs of the same stem;
    the parser fails on any row that breaks it.  Jobs without outputs (rule
    ``all``) do not appear.
    """

    def __init__(self, jobs: list[PlannedJob]) -> None:
        self.jobs = jobs

    def pending(self) -> list[PlannedJob]:
        return [job for job in self.jobs if job.pending]

    def pending_pairs(self) -> list[tuple[str, str]]:
        """(rule, first output) of each job that would run, sorted."""
        return sorted((job.rule, job.output) for job in self.pending())

    def rule_counts(self) -> collections.Counter:
        """Jobs that would run, per rule."""
        return collections.Counter(job.rule for job in self.pending())

    def outputs(self, rule: str) -> set[str]:
        """First outputs of the jobs of ``rule`` that would run."""
        return {job.output for job in self.pending() if job.rule == rule}


def parse_summary(text: str) -> SnakemakePlan:
    """Parse the standard output of ``snakemake --summary``."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = "\t".join(SUMMARY_COLUMNS)
    if not lines or lines[0] != header:
        raise ValueError(f"not a Snakemake summary: expected the header {header!r}, "
                         f"got {lines[:1]!r}")
    groups: dict[str, list[tuple[str, str, str, bool]]] = {}
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != len(SUMMARY_COLUMNS):
            raise ValueError(f"summary row with {len(fields)} fields: {line!r}")
        row = dict(zip(SUMMARY_COLUMNS, fields))
        if row["plan"] not in _PLAN_VALUES:
            raise ValueError(f"unknown plan {row['plan']!r} in {line!r}")
        stem = os.path.splitext(row["output_file"])[0]
        groups.setdefault(stem, []).append((row["output_file"], row["rule"], row["status"],
                                            _PLAN_VALUES[row["plan"]]))
    jobs = []
    for stem, rows in groups.items():
        outputs, rules, statuses, pending = zip(*rows)
        if len(set(rules)) != 1 or len(set(pending)) != 1:
            raise ValueError(f"outputs of stem {stem} belong to several jobs: {rows}")
        if outputs.count(f"{stem}.json") != 1:
            raise ValueError(f"job of rule {rules[0]} writing {outputs} has no sidecar {stem}.json")
        jobs.append(PlannedJob(rules[0], outputs, statuses, pending[0]))
    return SnakemakePlan(jobs)


def snakemake_plan(workdir: Path, *args: str) -> SnakemakePlan:
    """What Snakemake would do in ``workdir`` (targets and options in ``args``), without doing it."""
    return parse_summary(run_snakemake(workdir, "--summary", *args).stdout)


# --- parallel runs (pytest-xdist) ------------------------------------------------------

#: Test modules whose tests share a costly session build, by build.  Each
#: xdist worker would make its own build, and some tests edit the tiny runs
#: (then restore them), so every test of these modules runs on one worker
#: (:class:`SharedBuildScheduling`).  Whole modules, because
#: xdist's controller sees test ids, not fixtures (and pytest 9.2 no longer
#: lets xdist's ``xdist_group`` marks rename a test id);
#: ``test_every_user_of_a_shared_build_runs_in_its_group`` keeps this table true.
SHARED_BUILD_MODULES = {
    "tests/workflow/test_workflow_paper2.py": "tiny_paper2_run",
    "tests/workflow/test_workflow_moments.py": "tiny_paper2_run",
    "tests/workflow/test_workflow_untied.py": "tiny_paper2_run",
    "tests/workflow/test_workflow.py": "tiny_run",
    "tests/workflow/test_amp_workflow.py": "tiny_run",
    "tests/workflow/test_gd_workflow.py": "tiny_run",
    "tests/workflow/test_report.py": "tiny_run",
    "tests/workflow/test_repair.py": "tiny_run",
    "tests/workflow/test_crate_workflow.py": "tiny_run",
    # one throwaway Slurm per session, brought up and torn down by one worker
    "tests/cluster/test_slurm.py": "cluster",
}


def shared_build_of(nodeid: str) -> str | None:
    """The shared build whose worker runs the test ``nodeid``, or None."""
    return SHARED_BUILD_MODULES.get(nodeid.split("::", 1)[0])


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest-xdist is a test extra; without it the suite runs serially
    LoadScopeScheduling = None

if LoadScopeScheduling is not None:
    class SharedBuildScheduling(LoadScopeScheduling):
        """xdist's scope scheduling: a scope per shared build, per other workflow module, per unit test.

        A workflow module's tests share module fixtures that run Snakemake (a
        reference run, a repository copy): split across workers they would be
        built twice.  Unit tests are cheap to set up and go out one by one.
        """

        def _split_scope(self, nodeid: str) -> str:
            build = shared_build_of(nodeid)
            if build:
                return build
            module = nodeid.split("::", 1)[0]
            return module if module.startswith(("tests/workflow/", "tests/cluster/")) else nodeid

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(config, log):
        """``-n N`` (pyproject: ``-n auto``) schedules by shared build; other ``--dist`` modes as xdist does.

        The scopes go out in collection order (:func:`pytest_collection_modifyitems`
        puts the long ones first), not by their number of tests, so that no long
        test is left to run alone at the end.
        """
        if config.getvalue("dist") != "load":
            return None
        config.option.loadscopereorder = False
        return SharedBuildScheduling(config, log)


def _schedule_rank(item: pytest.Item) -> int:
    """Long tests first: the tiny paper-2 run, the tiny run, the other workflow tests, modules with slow tests."""
    build = shared_build_of(item.nodeid)
    if build == "tiny_paper2_run":
        return 0
    if build is not None:
        return 1
    if item.nodeid.startswith(("tests/workflow/", "tests/cluster/")):
        return 2
    return 3 if any(other.get_closest_marker("slow") for other in _module_items(item)) else 4


def _module_items(item: pytest.Item) -> list[pytest.Item]:
    return _MODULE_ITEMS.get(item.nodeid.split("::", 1)[0], [item])


_MODULE_ITEMS: dict[str, list[pytest.Item]] = {}


def pytest_collection_modifyitems(config, items):
    """Collect the long tests first (a stable sort: each module keeps its order).

    Every xdist worker collects the same order, which is the order in which
    SharedBuildScheduling hands the tests out; a serial run is unaffected in
    what it runs.
    """
    _MODULE_ITEMS.clear()
    for item in items:
        _MODULE_ITEMS.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    items.sort(key=_schedule_rank)


@pytest.fixture(scope="session")
def repo_copy(tmp_path_factory) -> Path:
    """A pristine copy of the repository, shared by the tests that run no jobs: never modify it."""
    return copy_repository(tmp_path_factory.mktemp("repo") / "aimrepro")


@pytest.fixture(scope="session")
def quick_plan(repo_copy) -> SnakemakePlan:
    """Snakemake's plan of the repository's config at the quick scale, once per session."""
    return snakemake_plan(repo_copy)


@pytest.fixture(scope="session")
def referee_plan(repo_copy) -> SnakemakePlan:
    """Snakemake's plan of the repository's config at the referee scale, once per session."""
    return snakemake_plan(repo_copy, "--config", "scale=referee")


@pytest.fixture(scope="session")
def paper_plan(repo_copy) -> SnakemakePlan:
    """Snakemake's plan of the repository's config at the paper scale, once per session."""
    return snakemake_plan(repo_copy, "--config", "scale=paper")


# --- configs ---------------------------------------------------------------------------------


def repository_config() -> dict:
    """The repository's config.yaml as written (a fresh copy)."""
    return yaml.safe_load((REPO / "config.yaml").read_text())


def validated(config: dict) -> dict:
    """What the Snakefile does to a config before planning: schema defaults, cross-key checks, then
    the plan of the scale it runs against ``limits``.

    Raises :class:`aimrepro.config.ConfigError` with the message Snakemake would print.
    """
    from aimrepro.config import validate_config
    from aimrepro_workflow.checks import check_config, check_plan

    validate_config(config, CONFIG_SCHEMA)
    check_config(config)
    check_plan(config, [config["scale"]])
    return config


def set_key(config: dict, key: str, value) -> dict:
    """Set the value at a key path (``a.b[0].c``; a name may hold a dot; a key the config leaves to
    its default is written into its mapping); returns ``config``."""
    from aimrepro_workflow.checks import key_parts

    parts = key_parts(config, key)
    if parts is None:
        parent, _, name = key.rpartition(".")
        parts = [*key_parts(config, parent), name]
    node = config
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return config


def size_key_table() -> list[tuple[str, str]]:
    """(scale, key) of every integer size the plan of each scale takes from the repository's config.

    Generated from the registry (``aimrepro_workflow.checks.size_keys``: every sized value of every
    planned job with the key it came from, and the counts of ``Plan.count``), each key where it is
    written: a preset's key it inherits is its base's.  A key of the science (``paper1.``,
    ``paper2.``) is the same value at every scale: it comes with the first scale that reads it.
    """
    from aimrepro.config import SCALES, validate_config
    from aimrepro_workflow.checks import key_parts, size_keys
    from aimrepro_workflow.plans import Plan

    raw = repository_config()
    expanded = validate_config(copy.deepcopy(raw), CONFIG_SCHEMA)
    out: dict[str, str] = {}
    for scale in SCALES:
        for key in size_keys(expanded, scale, Plan(expanded)):
            node = expanded
            for part in key_parts(expanded, key):
                node = node[part]
            if not isinstance(node, int) or isinstance(node, bool):
                continue
            preset = key.split(".")[1] if key.startswith("scales.") else None
            while preset and key_parts(raw, key) is None and raw["scales"][preset].get("extends"):
                base = raw["scales"][preset]["extends"]
                key, preset = key.replace(f"scales.{preset}.", f"scales.{base}.", 1), base
            out.setdefault(key, scale)
    return [(scale, key) for key, scale in out.items()]


#: Paper 1 theory: few rho, few grid points, one hardmax channel.
_TINY_THEORY = {
    "scale": "quick",
    "scales": {
        "quick": {"se_points": {"softmax": 4, "hardmax": 3, "small_width": 4}},
        "paper": {"se_points": {"softmax": 8, "hardmax": 4, "small_width": 4}},
    },
    "paper1": {
        "figure1": {
            "T": 2,
            "channels": ["hardmax"],
            "left": {"rhos": [0.5], "alpha": {"spacing": "log", "lo": 0.1, "hi": 3}},
            "right": {"rhos": [0.5], "alphabar": {"spacing": "log", "lo": 0.2, "hi": 6},
                      "small_width_limit": True},
        },
        "figure2": {
            "left": {"T": 2, "rhos": [0.5, 1.0],
                     "alphapr": {"spacing": "lin", "lo": 0.01, "hi": 1},
                     "rho_infinity": True,
                     "rho_infinity_alpha": {"spacing": "lin", "lo": 0, "hi": 0.25}},
            "right": {"T": 2, "rho": 0.5, "alphaT": {"spacing": "lin", "lo": 0.01, "hi": 1}},
        },
    },
}

#: Seed of the tiny paper-1 simulations (datasets, AMP, GD).
TINY_SEED = 17


def tiny_theory_config() -> dict:
    """Paper 1's theory only: seven SE curves, two figures, the theory claims."""
    return copy.deepcopy(_TINY_THEORY)


def tiny_paper1_config() -> dict:
    """Paper 1 whole and tiny: the theory, AMP markers on both figures, GD markers on Figure 2.

    AMP: alpha indices 13 and 25 of the hardmax grid, 0 and 14 of the softmax
    one, two seeds, d = 16.  GD: alpha indices 15 and 31 of its grid (0.017357
    and 0.3), T = 2 and 3, two seeds, three students, d = 12.
    """
    config = tiny_theory_config()
    config["seed"] = TINY_SEED
    quick = config["scales"]["quick"]
    quick["amp"] = {"hardmax": {"d": 16, "seeds": 2, "alpha_stride": 12},
                    "softmax": {"d": 16, "seeds": 2, "alpha_stride": 14}}
    quick["gd"] = {"d": 12, "seeds": 2, "inits": 3, "alpha_stride": 16, "alphaT_max": 3.2}
    quick["data"] = {"test_samples": 40, "temporary": False}
    paper1 = config["paper1"]
    paper1["figure1"]["amp"] = {
        "channels": ["hardmax"], "alpha": {"spacing": "log", "lo": 0.03, "hi": 8, "n": 32},
        "last_index": 25, "first_index": [{"rho": 0.5, "index": 13}]}
    paper1["figure2"]["right"]["amp"] = {
        "beta": 1, "runs": [{"T": 2, "alpha": {"spacing": "log", "lo": 0.05, "hi": 0.3, "n": 16},
                             "last_index": 14}]}
    paper1["figure2"]["right"]["gd"] = {
        "beta": 1, "Ts": [2, 3], "alpha": {"spacing": "log", "lo": 0.0012, "hi": 0.3, "n": 32},
        "optimizer": {"lr": 0.1, "steps": 60, "init_scale": 1.0}}
    paper1["amp_solver"] = {"damping": 0.5, "tol": 1e-5, "max_iter": 100}
    return config


#: Two attention layers (docs/paper1.md §14), tiny: skips 0, 1, 10 (10 and 1 are the two "large" ones
#: of the c -> infinity row only by name), tables of 3 x 3 nodes with 2^5 QMC points and two
#: scrambles, four SE points, markers at d = 12, a trend at d = 12, 16, GD with three students.
_TINY_TWO_LAYER = {
    "rho": 0.5, "skips": [0, 1, 10], "figure_skips": [0, 10],
    "alpha": {"spacing": "lin", "lo": 0.05, "hi": 0.43},
    "amp": {"alphas": [0.3], "trend": {"skip": 10, "alpha": 0.3}},
    "amp_solver": {"max_iter": 30, "stationary_window": 5, "window": 4, "patience": 2},
    "gd": {"skips": [10], "alphas": [0.3], "lr": 0.1, "steps": 20, "init_scale": 1.0},
}
_TINY_TWO_LAYER_SIZES = {
    "se_points": 4, "table": {"nodes": 3, "log2_samples": 5, "replicates": 2},
    "threshold": {"log2_samples": 5, "replicates": 2}, "amp": {"d": 12, "seeds": 2},
    "amp_trend": {"dims": [12, 16], "seeds": 2}, "gd": {"d": 12, "seeds": 2, "inits": 3},
}


def tiny_two_layer_config() -> dict:
    """Paper 1's tiny theory with the two-layer study (``_TINY_TWO_LAYER``) at both scales."""
    config = tiny_theory_config()
    config["seed"] = TINY_SEED
    config["paper1"]["two_layer"] = copy.deepcopy(_TINY_TWO_LAYER)
    for scale in ("quick", "paper"):
        config["scales"][scale]["two_layer"] = copy.deepcopy(_TINY_TWO_LAYER_SIZES)
    return config


_TINY_DYNAMICS = {
    "seed": 0,
    "threshold": 0.3,
    "figure2": {"T": 1, "links": ["h1", "h2"], "rho": 0.5, "normalisation": "unit_variance",
                "weight_decay": 0.0, "horizon": 0.4},
    "figureS1": {"T": 2, "links": ["softmax", "linear"], "rho": 0.5, "beta": 1.0},
    "figureS2": {"T": 2, "links": ["softmax", "hardmax"], "rho": 0.5, "beta": 1.0},
    "figureS3": {"T": 1, "links": ["h1"], "rho": 0.5, "normalisation": "unit_variance",
                 "eta": 0.05, "horizon": {"tied": 0.6, "direct": 0.6}, "stop_overlap": 0.5},
}
_TINY_DYNAMICS_SIZES = {
    "figure2": {"d": 20, "batch": 16, "seeds": 2, "records": 9,
                "lr": 0.01},
    "figureS1": {"dims": [12, 24], "n_samples": 2000},
    "figureS2": {"n_grid": 7},
    "figureS3": {"dims": {"tied": [16, 24], "direct": [16, 24]}, "batch": 16, "seeds": 2,
                 "records": 9},
}
_TINY_MOMENTS = {
    "figure1": {"T": 2, "rho": 0.5, "normalisation": "aim", "weight_decay": 0.0, "horizon": 0.8,
                "orders": [2, 3, 4], "short_time": 0.3},
    "figure4": {"rho": 0.5, "normalisation": "aim", "prefactor": 1.0, "weight_decay": 0.0,
                "horizon": 0.06, "orders": [2, 4, 6], "short_time": 0.02},
    "figureS6": {"rho": 0.5, "normalisation": "aim", "prefactor": 1.0, "matrix_scale": 0.3,
                 "weight_decays": [0.0, 4.0], "t_min": 0.01, "horizon": 1.0,
                 "times": [0.01, 0.1, 1.0], "short_time": 0.03},
}
_TINY_MOMENT_SIZES = {
    "figure1": {"d": 20, "batch": 16, "lr": 0.01, "seeds": 2, "records": 9},
    "figure4": {"d": 20, "batch": 16, "lr": 0.002, "seeds": 2, "records": 7},
    "figureS6": {"d": 16, "max_order": 5, "records": 7},
}
_UNTIED_SCIENCE = {"T": 1, "rho": 1.0, "normalisation": "unit_variance", "init_scales": [1.0, 0.9]}
_TINY_UNTIED = {
    "figure3": {**_UNTIED_SCIENCE, "links": ["h1", "h2"], "teacher_mean": 0.0, "weight_decay": 0.0,
                "horizon": 0.1},
    "figureS4": {**_UNTIED_SCIENCE, "link": "h2", "teacher_mean": 2.0, "init_mean": 0.5,
                 "fast_horizon": 2.0, "horizon": 0.06},
    "figureS5": {**_UNTIED_SCIENCE, "link": "h2", "teacher_means": [0.0, 2.0], "fast_horizon": 1.0,
                 "horizon": 0.2, "stop_overlap": 0.5},
    # the replicate tables, one job each (and their SGD runs): the rule scripts end to end
    "untied_velocity": {**_UNTIED_SCIENCE, "cases": [{"link": "h1", "teacher_mean": 0.0}]},
    "untied_truncation": {**_UNTIED_SCIENCE, "cases": [{"link": "h1", "teacher_mean": 0.5,
                                                        "horizon": 0.05}]},
    "untied_strong_recovery": {**_UNTIED_SCIENCE, "cases": [{"link": "h1", "teacher_mean": 0.0,
                                                             "window_start": 0.5, "horizon": 1.0}]},
}
_TINY_UNTIED_SIZES = {
    "figure3": {"d": 16, "batch": 16, "seeds": 1, "records": 5, "lr": {"h1": 0.02, "h2": 0.02}},
    "figureS4": {"dims": [12, 20], "batch": 16, "seeds": 1, "records": 4, "fast_records": 4,
                 "lr": 0.02},
    "figureS5": {"dims": [12, 20], "batch": 16, "seeds": 2, "records": 5, "fast_records": 3,
                 "lr": 0.02, "n_grid": 9},
    "untied_flow": {"method": "RK45", "rtol": 1e-4},
    "untied_velocity": {"dims": [12, 16], "seeds": 2},
    "untied_truncation": {"d": 12, "seeds": 2, "max_order": 3, "records": 5, "lr": 0.02, "batch": 16},
    "untied_strong_recovery": {"d": 12, "seeds": 2, "records": 11,
                               "sgd": {"lrs": [0.04, 0.02], "batch": 16, "seeds": 2}},
}

#: Paper 2's figures per family (with the family's claims fragment, the targets of the tiny paper-2 run).
PAPER2_FIGURES = {
    "dynamics": ("paper2_fig2", "paper2_figS1", "paper2_figS2", "paper2_figS3"),
    "moments": ("paper2_fig1", "paper2_fig4", "paper2_figS6"),
    "untied": ("paper2_fig3", "paper2_figS4", "paper2_figS5"),
}


def paper2_targets(*families: str, scale: str = "quick") -> list[str]:
    """The figures (PDF) and claims fragment of each of paper 2's ``families``."""
    targets = []
    for family in families:
        targets += [f"figures/{scale}/{name}.pdf" for name in PAPER2_FIGURES[family]]
        targets.append(f"results/{scale}/claims/paper2_{family}.tsv")
    return targets


def paper2_figure_inputs(plan, scale: str, name: str) -> set[str]:
    """The results a figure of paper 2 reads, as its rule takes them from ``plan`` (Plan.needs)."""
    inputs = plan.needs(name, scale).inputs.values()
    return {path for value in inputs for path in ([value] if isinstance(value, str) else value)}


def tiny_paper2_config(*families: str) -> dict:
    """Paper 1's tiny theory with paper 2's dynamics and the ``families`` named ("moments", "untied").

    The schema requires the dynamics sections whenever paper2 is configured.
    Dynamics: Figure 2 d = 20, two links, two seeds; S1 d = 12, 24; S2 a 7 x 7
    grid; S3 d = 16, 24, two seeds.  Moments: d = 20 (S6: 16), two seeds.
    Untied: d = 16 (Figure 3), 12 and 20 (S4, S5).
    """
    unknown = set(families) - {"moments", "untied"}
    if unknown:
        raise ValueError(f"families must be among 'moments', 'untied'; got {sorted(unknown)}")
    config = tiny_theory_config()
    config["paper2"] = copy.deepcopy(_TINY_DYNAMICS)
    sizes = copy.deepcopy(_TINY_DYNAMICS_SIZES)
    for family, science, size in (("moments", _TINY_MOMENTS, _TINY_MOMENT_SIZES),
                                  ("untied", _TINY_UNTIED, _TINY_UNTIED_SIZES)):
        if family in families:
            config["paper2"].update(copy.deepcopy(science))
            sizes.update(copy.deepcopy(size))
    for scale in ("quick", "paper"):
        config["scales"][scale]["paper2"] = copy.deepcopy(sizes)
    return config


#: The cluster tests' target (tests/cluster): Figure 2 of paper 1 with three
#: SE curves in the left panel (rho = 0.5, 1 and infinity), one in the right
#: panel, then the figure: five jobs on two DAG levels.  A dry run in the
#: regular suite checks this count, so that a change to the DAG cannot first
#: show up as a failed cluster run.
CLUSTER_TARGET = "figures/quick/paper1_fig2.pdf"
CLUSTER_JOBS = 5


def cluster_tiny_config() -> dict:
    """The repository's config with few curves of few points and no simulations."""
    config = repository_config()
    config["scales"]["quick"]["se_points"] = {"softmax": 4, "hardmax": 3, "small_width": 4}
    config["paper1"]["figure2"]["left"]["rhos"] = [0.5, 1.0]
    # Theory only: without simulation sizes at this scale, Figure 2 draws no
    # AMP or GD markers.
    for simulation in ("amp", "gd", "trends"):
        config["scales"]["quick"].pop(simulation, None)
    config["paper1"].pop("figureS2", None)  # beyond the paper: its curves are not the tiny run's subject
    return config


# --- the tiny runs, once per session ------------------------------------------------


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """A repository copy with :func:`tiny_paper1_config`, run to the end once per session.

    Shared by test_workflow.py, test_amp_workflow.py, test_gd_workflow.py and test_report.py.
    A test that changes the copy (its config, a source file, a result)
    restores it as it was, mtimes included, so that the run stays complete
    for the others.
    """
    workdir = copy_repository(tmp_path_factory.mktemp("tiny") / "aimrepro", tiny_paper1_config())
    run_snakemake(workdir, "--cores", "2")
    return workdir


@pytest.fixture(scope="session")
def tiny_paper2_run(tmp_path_factory) -> Path:
    """A copy with ``tiny_paper2_config("moments", "untied")``: every figure of paper 2 and claims.md.

    One run for test_workflow_paper2.py, test_workflow_moments.py and
    test_workflow_untied.py, which only read it.
    """
    workdir = copy_repository(tmp_path_factory.mktemp("tiny_paper2") / "aimrepro",
                              tiny_paper2_config("moments", "untied"))
    run_snakemake(workdir, "--cores", "2", *paper2_targets("dynamics", "moments", "untied"),
                  "results/quick/claims.md")
    return workdir


# --- what a figure draws (matplotlib artists) ----------------------------------------


def errorbar_lines(ax) -> set:
    """The lines of an axis that belong to error-bar containers (data line and caps)."""
    found = set()
    for container in ax.containers:
        data_line, caplines, _ = container.lines
        found.update([data_line, *caplines])
    return found


def plain_lines(ax) -> list:
    """The lines of an axis that are not part of an error bar, in drawing order."""
    markers = errorbar_lines(ax)
    return [line for line in ax.get_lines() if line not in markers]


def legend_texts(ax) -> list[str]:
    """The entries of an axis' legend, in order."""
    return [text.get_text() for text in ax.get_legend().get_texts()]


def same_colour(a, b) -> bool:
    """Whether two matplotlib colour specifications are the same RGBA colour."""
    from matplotlib.colors import to_rgba

    return to_rgba(a) == to_rgba(b)


def yerr_of(container) -> np.ndarray:
    """Half-lengths of an error-bar container's vertical bars."""
    [bars] = container.lines[2]
    return np.array([(segment[1, 1] - segment[0, 1]) / 2 for segment in bars.get_segments()])


def xdata(line) -> np.ndarray:
    return np.asarray(line.get_xdata(), float)


def ydata(line) -> np.ndarray:
    return np.asarray(line.get_ydata(), float)


def xy(line) -> tuple[list, list]:
    """A line's data as two lists of floats (for exact comparisons)."""
    return list(xdata(line)), list(ydata(line))


# --- synthetic paper-2 trajectories (claims and figures on known inputs) ----------------


def tied_trajectory(times, p12, *, t1=0.4, t2=0.4, q22=0.5, d=100, batch=8, dt=0.01,
                    blew_up=False):
    """A symmetric tied-like trajectory with a prescribed structural overlap p12(t).

    Its overlap ratio |p12|/p22 is ``p12 / (q22 - t2^2)``.
    """
    from aimrepro.paper2.trajectory import ORDER_NAMES, OrderParameters, Trajectory

    times = np.asarray(times, dtype=float)
    rows = [OrderParameters.symmetric([t1, t2], [[0.5, p + t1 * t2], [p + t1 * t2, q22]])
            .as_vector() for p in p12]
    steps = np.rint(times / dt).astype(np.int64)
    return Trajectory(times, np.asarray(rows).reshape(-1, len(ORDER_NAMES)), d, blew_up,
                      float(times[-1] + dt) if blew_up else math.nan,
                      {"n_steps": steps, "n_samples": batch * steps})


def untied_trajectory(d, tau, overlap, mean, *, blew_up=False, flow_mean=None):
    """An untied trajectory with symmetric overlap ``overlap(τ)`` and student mean ``mean(τ)``."""
    from aimrepro.paper2.trajectory import ORDER_NAMES, Trajectory

    tau = np.asarray(tau, dtype=float)
    s, m = overlap(tau), mean(tau)
    order = np.zeros((tau.size, len(ORDER_NAMES)))
    columns = dict(zip(ORDER_NAMES, order.T))
    columns["t1"][:] = m / math.sqrt(d)
    columns["Psi22"][:] = columns["Omega22"][:] = 0.5
    columns["Psi12"][:] = columns["Omega12"][:] = 0.5 * s
    columns["Psi11"][:] = columns["Omega11"][:] = 0.5
    extra = {"t_fast": tau * d}
    if flow_mean is not None:
        extra.update(m_flow=flow_mean(tau), m_fast=flow_mean(tau))
    return Trajectory(tau, np.stack([columns[n] for n in ORDER_NAMES], axis=1), d, blew_up,
                      tau[-1] if blew_up else math.nan, extra)

