"""The shared result cache: two clones, one cache directory (docs/design.md, "Shared result cache").

The first clone computes Figure 2 of paper 1 (GAMP-RIE and GD runs on their
datasets) and Figures 2 and 3 of paper 2 (tied/direct SGD and their reference
flows, untied SGD and its population flow) with ``snakemake --cache`` and
stores every job of the cached rules in the cache; the second clone, run the
same way, computes none of them, makes byte-identical results, and its
provenance verifies and says what was reused and from where.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import (assert_same_results, copy_repository, run_cli, run_snakemake, snakemake_plan,
                      tiny_paper1_config, tiny_paper2_config)

pytestmark = pytest.mark.workflow

TARGETS = ("figures/quick/paper1_fig2.pdf", "figures/quick/paper2_fig2.pdf",
           "figures/quick/paper2_fig3.pdf")
#: The rules these targets run that the cache serves (tests/unit/test_cached_rules.py has them all).
CACHED = {"amp_run", "gd_run", "sgd_run", "reference_flow", "untied_sgd_run", "untied_theory"}


def cache_config() -> dict:
    """Paper 1 tiny and whole, with paper 2's tiny dynamics and untied sections."""
    config = tiny_paper1_config()
    paper2 = tiny_paper2_config("untied")
    config["paper2"] = paper2["paper2"]
    for scale in ("quick", "paper"):
        config["scales"][scale]["paper2"] = paper2["scales"][scale]["paper2"]
    return config


class Clones:
    def __init__(self, root: Path) -> None:
        self.cache = root / "cache"
        self.cache.mkdir()
        self.one = copy_repository(root / "one" / "aimrepro", cache_config())
        self.two = copy_repository(root / "two" / "aimrepro", cache_config())
        self.env = {"SNAKEMAKE_OUTPUT_CACHE": str(self.cache)}

    def run(self, clone: Path, *targets: str, check: bool = True):
        # targets before --cache: it takes rule names
        return run_snakemake(clone, "--cores", "2", *(targets or TARGETS), "--cache",
                             env=self.env, check=check)


@pytest.fixture(scope="module")
def clones(tmp_path_factory) -> Clones:
    """Both clones run with --cache, the first one first; the second run's Snakemake output kept."""
    clones = Clones(tmp_path_factory.mktemp("shared_cache"))
    clones.run(clones.one)
    clones.second = clones.run(clones.two)
    return clones


def cached_jobs(clone: Path):
    jobs = [job for job in snakemake_plan(clone, *TARGETS).jobs if job.rule in CACHED]
    assert {job.rule for job in jobs} == CACHED  # the targets exercise every rule named
    return jobs


def test_the_first_clone_stores_each_cached_job_in_the_cache(clones):
    jobs = cached_jobs(clones.one)
    assert len(list(clones.cache.glob("*_sidecar.json"))) == len(jobs) >= 30
    for job in jobs:
        for output in job.outputs:
            path = clones.one / output
            assert path.is_symlink() and Path(os.readlink(path)).parent == clones.cache, output


def test_the_second_clone_computes_none_of_the_cached_jobs(clones):
    jobs = cached_jobs(clones.two)
    for job in jobs:
        for output in job.outputs:  # the very files of the first clone's run
            assert os.readlink(clones.two / output) == os.readlink(clones.one / output), output
        # the script never ran: every script logs at least its rule and wildcards
        log = clones.two / job.output.replace("results/quick/", "results/quick/logs/", 1)
        assert log.with_suffix(".log").read_text() == "", job.output
    stderr = clones.second.stderr
    assert "Moving output file" not in stderr  # nothing new for the cache
    assert stderr.count("from cache.") == sum(len(job.outputs) for job in jobs)
    # what is not cached ran: the datasets, SE curves, summaries and figures
    assert (clones.two / "results/quick/logs/figures/paper2_fig3.log").read_text()


def test_the_second_clone_makes_the_same_bytes(clones):
    results = assert_same_results(clones.one, clones.two)
    # the results of the cached jobs, of the others (datasets, SE curves, summaries) and the figures
    assert len(results) == len(cached_jobs(clones.two)) + 19 + 6


def test_the_second_clones_provenance_verifies_and_names_what_was_reused(clones):
    for figure in TARGETS:
        check = run_cli("provenance", "--check", figure, cwd=clones.two, timeout=120)
        assert check.returncode == 0, check.stdout
    tree = run_cli("provenance", "figures/quick/paper2_fig3.pdf", cwd=clones.two).stdout
    untied = [line for line in tree.splitlines() if "rule untied_" in line]
    assert len(untied) == 4
    for line in untied:
        assert f"reused: made on " in line and f" in {clones.one} (commit " in line
        assert f"cache entry {clones.cache}/" in line
    record = json.loads((clones.two / "figures/quick/paper2_fig3.json").read_text())
    assert set(record["reused_inputs"]) == set(record["inputs"])
    for path, reuse in record["reused_inputs"].items():
        assert reuse["workdir"] == str(clones.one)
        assert reuse["cache_entry"] == os.readlink(clones.two / path)


def test_a_damaged_cache_entry_is_refused_before_any_job_uses_it(clones):
    figure = clones.two / "figures/quick/paper2_fig3.pdf"
    run_tables = sorted((clones.two / "results/quick/untied/sgd").rglob("*.csv"))
    entry = Path(os.readlink(run_tables[0]))
    original, stat = entry.read_bytes(), entry.stat()
    try:
        entry.write_bytes(original.replace(b"\n", b"\n\n", 1))  # the cache is writable by all
        figure.unlink()
        refused = clones.run(clones.two, "figures/quick/paper2_fig3.pdf", check=False)
        assert refused.returncode != 0
        lines = sorted({line for line in refused.stderr.splitlines() if line.startswith("aimrepro: rule")})
        assert len(lines) == 1, refused.stderr[-3000:]
        assert "does not match its sidecar" in lines[0] and f"shared cache entry {entry}" in lines[0]
        assert not figure.exists()
    finally:
        entry.write_bytes(original)
        os.utime(entry, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    clones.run(clones.two, "figures/quick/paper2_fig3.pdf")
    assert figure.exists()


def test_cache_without_a_cache_directory_stops_before_any_job(tmp_path):
    workdir = copy_repository(tmp_path / "aimrepro", cache_config())
    refused = run_snakemake(workdir, "--cores", "1", "figures/quick/paper2_fig3.pdf", "--cache",
                            check=False, env={"SNAKEMAKE_OUTPUT_CACHE": ""})
    assert refused.returncode != 0
    assert "aimrepro: --cache needs the shared cache directory in the environment variable " \
           "SNAKEMAKE_OUTPUT_CACHE" in refused.stderr
    assert not (workdir / "results").exists()


def test_targets_after_cache_are_refused_not_read_as_rule_names(tmp_path):
    workdir = copy_repository(tmp_path / "aimrepro", cache_config())
    (tmp_path / "cache").mkdir()
    refused = run_snakemake(workdir, "-n", "--cores", "1", "--cache", "figures/quick/paper2_fig3.pdf",
                            check=False, env={"SNAKEMAKE_OUTPUT_CACHE": str(tmp_path / "cache")})
    assert refused.returncode != 0
    assert ("aimrepro: --cache takes rule names, not targets (figures/quick/paper2_fig3.pdf): give the "
            "targets before it") in refused.stderr
    # rule names after --cache, targets before it: accepted
    run_snakemake(workdir, "-n", "--cores", "1", "figures/quick/paper2_fig3.pdf", "--cache", "sgd_run",
                  env={"SNAKEMAKE_OUTPUT_CACHE": str(tmp_path / "cache")})
