"""Faults injected into a small real run: a crash mid-run and a damaged intermediate.

A run killed with SIGKILL half-way and resumed as the README says gives the
same bytes as an uninterrupted run; a truncated intermediate table is
refused by the job that would draw from it, ``aimrepro provenance --check``
tells the damage, and the repair command the refusal prints restores the bytes.
Runs are compared with ``aimrepro diff``.
The target is the cluster tests' (tests/cluster), whose DAG is checked here too.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import (CLUSTER_JOBS, CLUSTER_TARGET, assert_same_results, cluster_tiny_config,
                      copy_repository, executable, printed_remedy, run_cli, run_remedy, run_snakemake,
                      snakemake_plan)

pytestmark = pytest.mark.workflow

TARGET = CLUSTER_TARGET  # Figure 2 of paper 1: four SE curves, then the figure


def provenance_check(workdir: Path, path: str) -> subprocess.CompletedProcess:
    return run_cli("provenance", "--check", path, cwd=workdir, timeout=120)


@dataclass(frozen=True)
class Reference:
    """An uninterrupted run: its working directory and a copy of what it made."""

    workdir: Path
    made: Path


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Reference:
    """An uninterrupted run.  A test that damages it repairs it before it ends."""
    workdir = copy_repository(tmp_path_factory.mktemp("uninterrupted") / "aimrepro",
                              cluster_tiny_config())
    run_snakemake(workdir, "--cores", "2", TARGET)
    made = tmp_path_factory.mktemp("uninterrupted_results")
    for name in ("results", "figures"):
        shutil.copytree(workdir / name, made / name, symlinks=True)
    return Reference(workdir, made)


def test_the_cluster_target_is_five_theory_jobs(reference):
    """The DAG the cluster tests count (tests/cluster) is what they expect, and it is complete."""
    plan = snakemake_plan(reference.workdir, TARGET)
    rules = sorted(job.rule for job in plan.jobs)
    assert len(rules) == CLUSTER_JOBS, rules
    assert set(rules) == {"se_curve", "paper1_fig2"}
    assert plan.pending() == []


def test_a_run_killed_mid_way_resumes_to_the_same_bytes(tmp_path, reference):
    workdir = copy_repository(tmp_path / "aimrepro", cluster_tiny_config())
    started = subprocess.Popen([executable("snakemake"), "--cores", "1", TARGET], cwd=workdir,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 300
    while not list((workdir / "results").rglob("*.csv")):
        assert started.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline, "no result appeared within 300 s"
        time.sleep(0.05)
    os.killpg(started.pid, signal.SIGKILL)  # Snakemake and its running job, as a crash would
    started.wait(timeout=60)
    assert not (workdir / "figures" / "quick" / "paper1_fig2.png").exists(), \
        "the run was not interrupted mid-way"
    # The recovery the README gives: release the lock, redo incomplete jobs.
    run_snakemake(workdir, "--unlock")
    run_snakemake(workdir, "--cores", "1", "--rerun-incomplete", TARGET)
    assert len(assert_same_results(reference.made, workdir)) == CLUSTER_JOBS + 1  # SE tables, PDF, PNG
    assert provenance_check(workdir, "figures/quick/paper1_fig2.pdf").returncode == 0


def test_a_truncated_intermediate_is_refused_then_rebuilt(reference):
    workdir = reference.workdir  # a complete run: damaged here, then repaired
    figure = "figures/quick/paper1_fig2.pdf"
    assert provenance_check(workdir, figure).returncode == 0

    table = sorted((workdir / "results" / "quick" / "se").rglob("*.csv"))[0]
    lines = table.read_text().splitlines(keepends=True)
    table.write_text("".join(lines[:-1]))  # drop the last row
    check = provenance_check(workdir, figure)
    assert check.returncode == 1
    assert f"{table.relative_to(workdir)}: changed since use" in check.stdout

    refused = run_snakemake(workdir, "--cores", "1", TARGET, check=False)
    assert refused.returncode != 0
    # one line, shown by Snakemake as the job's error and again in its log
    message = sorted({line for line in refused.stderr.splitlines() if line.startswith("aimrepro: rule")})
    assert len(message) == 1, refused.stderr[-3000:]
    assert str(table.relative_to(workdir)) in message[0]
    assert "run: aimrepro provenance --check --repair results/quick" in message[0]
    assert not (workdir / figure).exists(), "a figure was drawn from the damaged table"

    # the remedy the message gives: its repair verbatim, then the snakemake command that
    # met the damage (the remedy's plain `snakemake` would build the whole config, far
    # more than this one-figure run: tests/workflow/test_repair.py follows it whole)
    repair, rerun = printed_remedy(refused.stderr, "made from it, run: ").split(" && ")
    assert rerun == "snakemake"
    run_remedy(workdir, repair)
    run_snakemake(workdir, "--cores", "1", TARGET)
    assert len(assert_same_results(reference.made, workdir)) == CLUSTER_JOBS + 1  # SE tables, PDF, PNG
    assert provenance_check(workdir, figure).returncode == 0
