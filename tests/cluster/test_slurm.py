"""The cluster path: the workflow through a real Slurm scheduler.

A module fixture brings up a throwaway one-node Slurm on 127.0.0.1 with
``slurm_up.sh`` (Debian's packages; root) and always stops it with
``slurm_down.sh``.  In a temporary copy of the repository with a tiny config,
the tests run Snakemake with ``--workflow-profile profiles/slurm`` exactly as
the README tells a user (account and partition as default resources), plus
the two status-check flags this accounting-free cluster needs, and check:

(a) every job of Figure 2 (its SE curves, then the figure: two DAG levels) was
    submitted with sbatch, ran as that Slurm job (the job id in its sidecar)
    and ended COMPLETED in Slurm's own record;
(b) the result tables are bit-identical to the same target run locally;
(c) a job that fails makes Snakemake exit non-zero with Slurm state FAILED,
    after the profile's retries, and leaves no output behind.

The tests are opt-in (``AIMREPRO_CLUSTER_TESTS=1``): they install packages
and start daemons.  Where the machine cannot host the cluster (not root, no
apt-get, no executor plugin), they are skipped with the reason (``pytest -rs``
shows it).
CI sets ``AIMREPRO_CLUSTER_TESTS=required``, which turns such a skip into a
failure: there the cluster path must really be exercised.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import (BIN, CLUSTER_JOBS, CLUSTER_TARGET, copy_repository, cluster_tiny_config,
                      executable, git, run_cli)

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
SLURM_UP, SLURM_DOWN = HERE / "slurm_up.sh", HERE / "slurm_down.sh"
#: Opt-in: the tests install Debian packages and start daemons, which a plain
#: `pytest` on a developer's machine must not do unasked.  "1" runs them where
#: possible (skip with the reason otherwise); "required" (CI) fails instead of skipping.
OPT_IN = os.environ.get("AIMREPRO_CLUSTER_TESTS", "")
REQUIRED = OPT_IN == "required"

#: What a user passes (docs/slurm.md, "Running"): targets first, then the
#: site's account and partition.  The loopback cluster's partition is
#: `debug`; without accounting Slurm accepts any account name.
SITE = ("--default-resources", "slurm_account=root", "slurm_partition=debug")
#: The CI-only flags, on the command line so that the profile stays what a real
#: cluster needs.  The loopback cluster has no accounting database, so sacct
#: (the plugin's default) cannot report states: ask squeue.  And a first status
#: check after 2 s instead of 40 s keeps the run short.
LOOPBACK = ("--slurm-init-seconds-before-status-checks", "2",
            "--slurm-status-command", "squeue")
#: A hard bound on each Snakemake run.  SIGINT, not SIGTERM: on SIGINT
#: Snakemake cancels its Slurm jobs and exits, on SIGTERM it waits for them.
RUN_SECONDS = 300

TARGET, N_JOBS = CLUSTER_TARGET, CLUSTER_JOBS
#: A meaningless curve (the rho -> 0 limit exists only along alpha/rho): the
#: path matches the rule, the job starts, and the package rejects it.
FAILING_TARGET = "results/quick/se/hardmax_T2_rho0/alpha_log_0.1_3_n3.csv"
FAILING_LOG = "results/quick/logs/se/hardmax_T2_rho0/alpha_log_0.1_3_n3.log"
FAILING_MESSAGE = "the rho -> 0 limit is a curve in alphabar"

SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+)")


def cluster_unavailable() -> str | None:
    """Why this machine cannot run the cluster tests, or None if it can."""
    if OPT_IN not in ("1", "required"):
        return ("opt-in: set AIMREPRO_CLUSTER_TESTS=1 to bring up a throwaway one-node Slurm "
                "here (root, Debian: installs slurmctld, slurmd, munge)")
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "the Slurm executor plugin is not installed: pip install -e '.[slurm]'"
    if os.geteuid() != 0:
        return (f"bringing up a one-node Slurm needs root (it installs packages and starts "
                f"slurmctld/slurmd); running as uid {os.geteuid()}")
    if not (shutil.which("apt-get") and shutil.which("dpkg")):
        return "no apt-get/dpkg: Debian's Slurm packages cannot be installed here"
    return None


def not_run(reason: str):
    """Skip with the reason, or fail where the cluster tests are required."""
    if REQUIRED:
        pytest.fail(f"AIMREPRO_CLUSTER_TESTS=required, but: {reason}", pytrace=False)
    pytest.skip(f"cluster test not run: {reason}")


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A one-node Slurm on 127.0.0.1 for the tests of this module, always torn down."""
    reason = cluster_unavailable()
    if reason:
        not_run(reason)
    log = tmp_path_factory.mktemp("slurm") / "slurm_up.log"
    try:
        # Output to a file, not a pipe: the daemons it starts must not hold our pipe.
        with open(log, "w") as out:
            up = subprocess.run(["bash", str(SLURM_UP)], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, timeout=600,
                                check=False)
        text = log.read_text()
        if up.returncode == 3:
            not_run(text.strip().splitlines()[-1])
        if up.returncode != 0:
            pytest.fail(f"slurm_up.sh exited {up.returncode}:\n{text[-3000:]}", pytrace=False)
        yield
    finally:
        subprocess.run(["bash", str(SLURM_DOWN)], stdin=subprocess.DEVNULL, timeout=120,
                       check=False)


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the venv's snakemake in ``workdir``, bounded by ``timeout -s INT``.

    SLURM_* variables of a surrounding job are dropped, so that a local run
    records no job id and a submitted job inherits none.  The venv's bin goes
    first on PATH: sbatch exports the environment into the job, which runs
    the venv's snakemake there.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    command = ["timeout", "-s", "INT", "-k", "30", str(RUN_SECONDS), executable("snakemake"),
               *args]
    with subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=RUN_SECONDS + 60)
        except BaseException:
            # Interrupted (CI's `timeout -s INT` around pytest) or out of time:
            # `timeout` runs Snakemake in a process group of its own, which CI's
            # SIGINT does not reach.  Forward it (`timeout` passes it on), so that
            # Snakemake cancels its Slurm jobs before the cluster goes down.
            process.send_signal(signal.SIGINT)
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def output_of(done: subprocess.CompletedProcess) -> str:
    return f"--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n{done.stderr[-6000:]}"


def slurm_job(job_id: str) -> dict[str, str]:
    """Slurm's record of a job (``scontrol show job``; kept for MinJobAge = 300 s)."""
    shown = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True,
                           text=True, timeout=30, check=True).stdout
    return dict(re.findall(r"(\w+)=(\S*)", shown))


def sidecars(workdir: Path) -> dict[str, dict]:
    """Every sidecar of a run, by path relative to the working directory."""
    found = [*workdir.glob("results/**/*.json"), *workdir.glob("figures/**/*.json")]
    return {str(path.relative_to(workdir)): json.loads(path.read_text()) for path in found}


@pytest.fixture(scope="module")
def slurm_run(slurm_cluster, tmp_path_factory):
    """Figure 2 of the tiny config, built through Slurm."""
    workdir = copy_repository(tmp_path_factory.mktemp("slurm_run") / "aimrepro",
                              cluster_tiny_config())
    done = snakemake(workdir, TARGET, "--workflow-profile", "profiles/slurm", *SITE, *LOOPBACK)
    if done.returncode != 0:
        pytest.fail(f"snakemake through Slurm exited {done.returncode}\n{output_of(done)}",
                    pytrace=False)
    return workdir, done


@pytest.fixture(scope="module")
def local_run(slurm_cluster, tmp_path_factory):
    """The same target run locally (profiles/default), for comparison.

    It asks for ``slurm_cluster`` only to be skipped with it.
    """
    workdir = copy_repository(tmp_path_factory.mktemp("local_run") / "aimrepro",
                              cluster_tiny_config())
    done = snakemake(workdir, TARGET, "--cores", "2")
    if done.returncode != 0:
        pytest.fail(f"local snakemake exited {done.returncode}\n{output_of(done)}",
                    pytrace=False)
    return workdir


def test_every_job_is_a_completed_slurm_job(slurm_run):
    workdir, done = slurm_run
    log = done.stdout + done.stderr
    submitted = SUBMITTED.findall(log)
    records = sidecars(workdir)
    assert len(records) == N_JOBS, sorted(records)
    assert len(submitted) == N_JOBS, log[-4000:]
    # Each job wrote its sidecar from inside its own Slurm job.
    assert sorted(record["slurm_job_id"] for record in records.values()) == sorted(submitted)
    assert {record["rule"] for record in records.values()} == {"se_curve", "paper1_fig2"}
    if shutil.which("git"):
        # Provenance works inside the jobs too: the commit of the working directory.
        head = git(workdir, "rev-parse", "HEAD")
        assert all(record["git"] == {"commit": head, "dirty": False}
                   for record in records.values())
    for job_id in submitted:
        job = slurm_job(job_id)
        assert job["JobState"] == "COMPLETED", job
        assert job["ExitCode"] == "0:0", job
        # What the user passed reached sbatch.
        assert (job["Partition"], job["Account"]) == ("debug", "root"), job
        assert Path(job["WorkDir"]) == workdir, job
    # The status checks really went through squeue, not a silent sacct fallback.
    assert "Falling back to 'sacct'" not in log
    assert (workdir / TARGET).exists()


def test_slurm_results_are_bit_identical_to_a_local_run(slurm_run, local_run):
    workdir, _ = slurm_run
    compared = run_cli("diff", "--json", str(local_run), str(workdir), timeout=120)
    assert compared.returncode == 0, compared.stdout[-4000:]
    statuses = {result["path"]: result["status"] for result in json.loads(compared.stdout)["results"]}
    tables = [path for path in statuses if path.endswith(".csv")]
    assert len(tables) == N_JOBS - 1 and {statuses[path] for path in tables} == {"same"}
    # the figure: the same drawing (its metadata names each copy's commit)
    assert {statuses["figures/quick/paper1_fig2.pdf"], statuses["figures/quick/paper1_fig2.png"]} \
        <= {"same", "close"}
    # The figure was drawn from the same inputs with the same parameters.
    figure_sidecar = "figures/quick/paper1_fig2.json"
    slurm_figure, local_figure = sidecars(workdir)[figure_sidecar], sidecars(local_run)[
        figure_sidecar]
    assert slurm_figure["inputs"] == local_figure["inputs"]
    assert slurm_figure["params"] == local_figure["params"]
    assert all(record["slurm_job_id"] is None for record in sidecars(local_run).values())


def test_a_failing_job_fails_the_run_with_slurm_state_failed(slurm_cluster, tmp_path_factory):
    workdir = copy_repository(tmp_path_factory.mktemp("failing_run") / "aimrepro",
                              cluster_tiny_config())
    done = snakemake(workdir, FAILING_TARGET, "--workflow-profile", "profiles/slurm",
                     *SITE, *LOOPBACK)
    log = done.stdout + done.stderr
    # 1 is Snakemake's own failure; timeout would give 124 (or 137 after -k).
    assert done.returncode == 1, output_of(done)
    retries = yaml.safe_load((workdir / "profiles/slurm/config.yaml").read_text()).get(
        "retries", 0)
    submitted = SUBMITTED.findall(log)
    assert len(submitted) == 1 + retries, log[-4000:]
    for job_id in submitted:
        assert f"SLURM-job '{job_id}' failed, SLURM status is: 'FAILED'" in log
        job = slurm_job(job_id)
        assert job["JobState"] == "FAILED", job
        assert job["ExitCode"] != "0:0", job
    # It failed for the reason provoked, not because of the cluster.
    assert FAILING_MESSAGE in (workdir / FAILING_LOG).read_text()
    # No result, no sidecar, no temporary file of the atomic writes.
    result_dir = (workdir / FAILING_TARGET).parent
    assert not result_dir.exists() or not any(result_dir.iterdir()), list(result_dir.iterdir())
