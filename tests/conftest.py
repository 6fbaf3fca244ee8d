"""Shared fixtures: the repository root, the venv's executables, repository copies.

Workflow tests drive the Snakemake command line in a subprocess (its Python
API ignores profiles) inside a temporary copy of the repository, so that
they never touch the developer's results/ or .snakemake/.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Test matrices are small (d <= 400): one BLAS thread is fastest, and on a shared
# 2-core machine a multithreaded BLAS oversubscribes the cores (an untied SGD test
# took 81 s instead of 7 s at load 6).  Set before numpy is first imported.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

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
#: imported from the editable install).
WORKFLOW_FILES = ("Snakefile", "config.yaml", "workflow", "profiles", "src", ".gitignore")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".snakemake")


def science_api_missing() -> str | None:
    """Why the science API the pipeline calls is unavailable, or None if it is there."""
    needed = {
        "aimrepro.paper1.state_evolution": ("se_table", "solve_se", "weak_recovery_threshold"),
        "aimrepro.paper1.channels": ("make_channel", "CHANNELS"),
    }
    for module_name, names in needed.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            return f"waiting for {module_name} ({err})"
        missing = [name for name in names if not hasattr(module, name)]
        if missing:
            return f"waiting for {module_name}.{', '.join(missing)}"
    return None


def executable(name: str) -> str:
    """An executable of the venv running the tests (snakemake, aimrepro)."""
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed next to {sys.executable}")
    return str(path)


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
        git = ["git", "-c", "user.name=aimrepro-tests", "-c", "user.email=tests@invalid",
               "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q"], cwd=destination, check=True)
        subprocess.run([*git, "add", "-A"], cwd=destination, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "test copy"], cwd=destination, check=True)
    return destination


def assert_usage_error(done: subprocess.CompletedProcess, names) -> None:
    """A refused command line: exit 2, empty stdout, one stderr line naming each of ``names``."""
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    for name in names:
        assert name in lines[0]


def run_snakemake(workdir: Path, *args: str, check: bool = True,
                  timeout: float = 1200) -> subprocess.CompletedProcess:
    """Run the venv's ``snakemake`` in ``workdir``; on failure with check, show its output."""
    completed = subprocess.run(
        [executable("snakemake"), *args], cwd=workdir, capture_output=True, text=True,
        timeout=timeout, check=False,
    )
    if check and completed.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} exited {completed.returncode}\n"
                    f"--- stdout ---\n{completed.stdout[-5000:]}\n"
                    f"--- stderr ---\n{completed.stderr[-5000:]}")
    return completed


#: The cluster tests' target (tests/cluster): Figure 2 of paper 1 with three
#: SE curves in the left panel (rho = 0.5, 1 and infinity), one in the right
#: panel, then the figure: five jobs on two DAG levels.  A dry run in the
#: regular suite checks this count, so that a change to the DAG cannot first
#: show up as a failed cluster run.
CLUSTER_TARGET = "figures/quick/paper1_fig2.pdf"
CLUSTER_JOBS = 5


def cluster_tiny_config() -> dict:
    """The repository's config with few curves of few points and no simulations."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scales"]["quick"]["se_points"] = {"softmax": 4, "hardmax": 3, "small_width": 4}
    config["paper1"]["figure2"]["left"]["rhos"] = [0.5, 1.0]
    # Theory only: without simulation sizes at this scale, Figure 2 draws no
    # AMP or GD markers.
    for simulation in ("amp", "gd", "trends"):
        config["scales"]["quick"].pop(simulation, None)
    config["paper1"].pop("figureS2", None)  # beyond the paper: its curves are not the tiny run's subject
    return config


@pytest.fixture(scope="session")
def repo_copy(tmp_path_factory) -> Path:
    """A pristine copy of the repository, shared by the tests that do not run jobs."""
    return copy_repository(tmp_path_factory.mktemp("repo") / "aimrepro")
