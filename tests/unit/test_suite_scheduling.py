"""The suite's own scheduling: tests that share a session build run on one xdist worker."""

from __future__ import annotations

import pytest

from conftest import REPO, SHARED_BUILD_MODULES, shared_build_of

#: Session fixtures built once per worker that must therefore be used from one group only.
SHARED_BUILDS = ("tiny_run", "tiny_paper2_run")


def test_every_user_of_a_shared_build_runs_in_its_group(request):
    """Each collected test that uses a tiny run lives in a module scheduled with that run's group."""
    users = [(item.nodeid, fixture) for item in request.session.items
             for fixture in SHARED_BUILDS if fixture in item.fixturenames]
    if not users:
        pytest.skip("no test of this session uses a tiny run")
    misplaced = [(nodeid, fixture, shared_build_of(nodeid)) for nodeid, fixture in users
                 if shared_build_of(nodeid) != fixture]
    assert misplaced == []


def test_shared_build_modules_exist_and_test_ids_map_to_them():
    for module in SHARED_BUILD_MODULES:
        assert (REPO / module).is_file(), module
    assert shared_build_of("tests/workflow/test_report.py::test_x[a::b]") == "tiny_run"
    assert shared_build_of("tests/unit/test_gauss.py::test_x") is None


def test_workflow_modules_go_out_whole_and_unit_tests_one_by_one():
    """Module fixtures that run Snakemake are built once: a workflow module is one scheduling unit."""
    conftest = pytest.importorskip("conftest")
    if not hasattr(conftest, "SharedBuildScheduling"):
        pytest.skip("pytest-xdist is not installed")
    split = conftest.SharedBuildScheduling._split_scope
    assert split(None, "tests/workflow/test_faults.py::test_a[x]") == "tests/workflow/test_faults.py"
    assert split(None, "tests/workflow/test_report.py::test_b") == "tiny_run"
    assert split(None, "tests/unit/test_gauss.py::test_c") == "tests/unit/test_gauss.py::test_c"
