"""`aimrepro cost`: the cost model's table and JSON on the repository's config."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml

from conftest import REPO, assert_usage_error, executable  # conftest puts workflow/lib on sys.path

from aimrepro.config import validate_config
from aimrepro_workflow.costs import CostModel


def run_cost(*args: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([executable("aimrepro"), "cost", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def model() -> CostModel:
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    return CostModel(validate_config(yaml.safe_load((REPO / "config.yaml").read_text()), schema))


@pytest.mark.parametrize("scale", ["quick", "paper"])
def test_json_is_the_models_table(model, scale):
    done = run_cost("--scale", scale, "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    expected = model.table(scale)
    assert printed["scale"] == scale and printed["config"].endswith("config.yaml")
    assert printed["total"]["jobs"] == expected["total"]["jobs"]
    assert printed["total"]["cpu_seconds"] == pytest.approx(expected["total"]["cpu_seconds"])
    assert [row["rule"] for row in printed["rules"]] == [row["rule"] for row in expected["rules"]]


def test_the_table_has_a_row_per_rule_and_the_totals(model):
    done = run_cost()  # the config's scale: quick
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("aimrepro cost: scale quick, config ")
    header = lines[1].split()
    assert header[:4] == ["rule", "jobs", "core-h", "bound"]
    table = model.table("quick")
    rows = {line.split()[0]: line.split() for line in lines[2:] if line and not line[0].isdigit()
            and not line.startswith("core-h")}
    for row in table["rules"]:
        assert rows[row["rule"]][1] == str(row["jobs"])
    assert rows["total"][1] == str(table["total"]["jobs"])
    assert f"{table['total']['jobs']} jobs, " in done.stdout


def test_the_paper_scale_costs_more_than_the_quick_one():
    quick = json.loads(run_cost("--scale", "quick", "--json").stdout)["total"]
    paper = json.loads(run_cost("--scale", "paper", "--json").stdout)["total"]
    assert paper["jobs"] > 10 * quick["jobs"]
    assert paper["cpu_seconds"] > 100 * quick["cpu_seconds"]
    assert paper["temporary_disk_bytes"] > 0 == quick["temporary_disk_bytes"]


def _config_file(tmp_path, config):
    """A config file in a directory of its own, away from any repository."""
    (tmp_path / "elsewhere").mkdir(exist_ok=True)
    path = tmp_path / "elsewhere" / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_configfile_anywhere_is_costed_by_the_installed_workflow_layer(tmp_path):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scales"]["quick"]["paper2"]["figure3"]["seeds"] = 4  # twice the untied Figure 3 runs
    path = _config_file(tmp_path, config)
    (tmp_path / "cwd").mkdir()
    done = run_cost("--configfile", str(path), "--json", cwd=tmp_path / "cwd")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["config"] == str(path)
    default = json.loads(run_cost("--json").stdout)
    untied = {row["rule"]: row["jobs"] for row in json.loads(done.stdout)["rules"]}["untied_sgd_run"]
    # Figure 3's 6 more runs, and the plateau runs beside them, which take Figure 3's replicates
    from aimrepro_workflow.plans import Plan

    def plateau_only(cfg):
        plan = Plan(cfg)
        return len({r["path"] for r in plan.figure3_plateau_runs("quick")}
                   - {r["path"] for r in plan.figure3_untied_runs("quick")})
    more_plateau = plateau_only(config) - plateau_only(yaml.safe_load((REPO / "config.yaml").read_text()))
    assert untied == {row["rule"]: row["jobs"] for row in default["rules"]}["untied_sgd_run"] + 6 + more_plateau


def test_the_command_leaves_sys_path_alone(monkeypatch, capsys):
    import sys

    from aimrepro.cli import main

    monkeypatch.chdir(REPO)
    before = list(sys.path)
    assert main(["cost", "--json"]) == 0
    assert sys.path == before
    assert json.loads(capsys.readouterr().out)["scale"] == "quick"


def test_without_a_config_the_command_says_where_to_run(tmp_path):
    assert_usage_error(run_cost(cwd=tmp_path), ["config.yaml", "repository root", "--configfile"])


def test_the_scale_costed_is_checked_against_the_limits(tmp_path):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scales"]["paper"]["hardmax_tokens"]["amp"]["seeds"] = 10**6
    path = _config_file(tmp_path, config)
    assert run_cost("--configfile", str(path), "--scale", "quick", "--json").returncode == 0
    assert_usage_error(run_cost("--configfile", str(path), "--scale", "paper"),
                       [str(path), "scales.paper.hardmax_tokens.amp.seeds = 1000000", "limits.plan_jobs"])


def test_an_invalid_config_is_refused_in_one_line(tmp_path):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scales"]["paper"]["gd"]["d"] = -5
    path = _config_file(tmp_path, config)
    assert_usage_error(run_cost("--configfile", str(path), cwd=tmp_path),
                       [str(path), "scales.paper.gd.d = -5"])
    # found without --configfile: the message names the file, not an option not given
    done = run_cost(cwd=path.parent)
    assert_usage_error(done, [str(path), "scales.paper.gd.d = -5"])
    assert "--configfile" not in done.stderr.splitlines()[-1]


def test_a_config_that_is_not_yaml_is_one_line_naming_the_line_that_opened_the_fault(tmp_path):
    path = _config_file(tmp_path, yaml.safe_load((REPO / "config.yaml").read_text()))
    text = path.read_text()
    path.write_text("limits:\n  job_memory_gb: [64\n" + text)
    done = run_cost(cwd=path.parent)
    assert_usage_error(done, [f"config file {path}, line", "not valid YAML",
                              "flow sequence opened at line 2, column 18"])
    assert "--configfile" not in done.stderr.splitlines()[-1]
