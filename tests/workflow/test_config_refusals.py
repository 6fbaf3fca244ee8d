"""``snakemake -n`` refuses a config whose plan exceeds ``limits``, in one line naming the key, before any job.

The check is the one of tests/unit/test_plan_check.py, which sets every
size-bearing key the registry plans to an absurd value in-process, at every
scale; here Snakemake runs it on a sample: one refusal of each kind (too many
jobs, an invalid job, too much memory, too many core-hours, an inherited key)
across the scales.  ``AIMREPRO_EXHAUSTIVE_CHECKS=1`` runs ``snakemake -n`` on
every key of that table instead (~300 Snakemake starts, about 15 minutes).
"""

from __future__ import annotations

import copy
import os

import pytest
import yaml

from aimrepro.config import ConfigError

from conftest import config_error_lines, repository_config, run_snakemake, set_key, size_key_table, validated

pytestmark = pytest.mark.workflow


def refused(repo_copy, tmp_path, scale: str, key: str, value) -> str:
    """The one line Snakemake prints, refusing ``key = value`` at ``scale`` before any job.

    It is the line of the check run in-process (conftest's ``validated``, what
    tests/unit/test_plan_check.py runs on every key), after ``aimrepro: ``.
    """
    config = set_key(repository_config(), key, value)
    with pytest.raises(ConfigError) as in_process:
        validated({**copy.deepcopy(config), "scale": scale})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    done = run_snakemake(repo_copy, "-n", "--configfile", str(path), "--config", f"scale={scale}",
                         check=False, timeout=600)
    assert done.returncode != 0
    lines = config_error_lines(done)
    assert len(lines) == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Building DAG" not in done.stdout + done.stderr
    assert not (repo_copy / "results").exists()
    assert lines[0] == f"aimrepro: {in_process.value}"
    return lines[0]


SAMPLE = [
    # too many jobs: counted from the config, nothing planned
    ("paper", "scales.paper.hardmax_tokens.amp.seeds", 10**6,
     "the plan of scale paper has ~1.2e+07 jobs"),
    # a job the science refuses (the key crashed the old check)
    ("paper", "scales.paper.trends.amp.hardmax_rho0.2.dims[2]", 10**9, "a job (amp_run) cannot run"),
    # memory
    ("quick", "scales.quick.paper2.untied_velocity.dims[1]", 200_000,
     "the largest job (untied_velocity) needs"),
    # core-hours of one job
    ("paper", "scales.paper.hardmax_tokens.n_reference", 10**12, "the largest job (fisher_table) needs"),
    # a key the referee preset inherits: named where it is written
    ("referee", "scales.quick.paper2.figure3.d", 10**6, "the largest job (untied_"),
]


@pytest.mark.parametrize(("scale", "key", "value", "says"), SAMPLE, ids=[f"{s}:{k}" for s, k, _, _ in SAMPLE])
def test_snakemake_refuses_an_absurd_size_in_one_line_naming_its_key(repo_copy, tmp_path, scale, key, value,
                                                                     says):
    line = refused(repo_copy, tmp_path, scale, key, value)
    assert line.startswith(f"aimrepro: invalid config: {key} = {value}: "), line
    assert says in line, line


def _exhaustive():
    return size_key_table() if os.environ.get("AIMREPRO_EXHAUSTIVE_CHECKS") == "1" else []


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("AIMREPRO_EXHAUSTIVE_CHECKS") != "1",
                    reason="opt-in (AIMREPRO_EXHAUSTIVE_CHECKS=1): snakemake -n on every key of the table")
@pytest.mark.parametrize(("scale", "key"), _exhaustive() or [("quick", "-")],
                         ids=[f"{s}:{k}" for s, k in _exhaustive()] or ["every-key"])
def test_snakemake_refuses_every_size_key_set_absurd(repo_copy, tmp_path, scale, key):
    line = refused(repo_copy, tmp_path, scale, key, 10**12)
    assert line.startswith(f"aimrepro: invalid config: {key} = {10**12}"), line
