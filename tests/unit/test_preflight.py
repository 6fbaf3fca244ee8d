"""aimrepro.preflight: faults of the machine found before any job, each one line with the file and remedy."""

from __future__ import annotations

import os
from pathlib import Path
from collections import namedtuple

import pytest

from aimrepro import preflight


def test_a_config_that_is_not_yaml_is_named_with_its_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("scale: quick\nseed: [1, 2\nlimits: {}\n")
    message = preflight.yaml_problem(path)
    assert message.startswith(f"config file {path}, line ") and "not valid YAML" in message
    assert "\n" not in message
    path.write_text("scale: quick\n\tseed: 3\n")  # a tab where YAML forbids it
    assert "line 2" in preflight.yaml_problem(path)
    path.write_text("- a list\n- not a mapping\n")
    assert preflight.yaml_problem(path).endswith("must be a YAML mapping of keys at its top level, got list")
    # an unclosed bracket: the parser stops lines later; the line that opened it is named
    path.write_text("limits:\n  job_memory_gb: [64\nscale: quick\nbackend:\n  name: numpy\n")
    message = preflight.yaml_problem(path)
    assert "while parsing a flow sequence opened at line 2, column 18" in message, message
    path.write_text("scale: quick\n")
    assert preflight.yaml_problem(path) is None
    assert "does not exist" in preflight.yaml_problem(tmp_path / "missing.yaml")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_a_directory_without_write_permission_is_found(tmp_path):
    locked = tmp_path / "results"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        message = preflight.unwritable([tmp_path / "figures", locked])
        assert message.startswith(f"{locked} cannot be written (Permission denied, Errno 13)")
    finally:
        locked.chmod(0o700)


def test_an_unwritable_directory_is_found_by_a_real_probe(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    assert preflight.unwritable([tmp_path / "results" / "quick"]) is None  # its nearest parent is probed
    assert list(tmp_path.iterdir()) == []  # the probe left nothing
    monkeypatch.setattr(preflight.tempfile, "NamedTemporaryFile", refuse)
    message = preflight.unwritable([tmp_path / "results"])
    assert message == (f"{tmp_path / 'results'} cannot be written (Read-only file system, Errno 30); make it "
                       "writable (a read-only mount: remount it, or run from a writable copy of the repository)")


def test_the_free_disk_must_cover_the_runs_outputs(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(preflight.shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 188_000, 188_000))
    message = preflight.disk_shortfall(tmp_path / "results", 564_000)
    assert message.startswith("188 kB free under ") and "writes about 564 kB" in message
    assert preflight.disk_shortfall(tmp_path, 100_000) is None


@pytest.mark.parametrize("n, text", [(999, "999 B"), (188_000, "188 kB"), (3.06e8, "306 MB"), (1.5e10, "15 GB")])
def test_sizes_are_written_as_df_h_does(n, text):
    assert preflight.format_bytes(n) == text


def test_a_full_disk_or_a_read_only_mount_is_one_line_naming_the_file_and_the_remedy():
    import errno

    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "results/quick/amp/run.npz.tmp")
    line = preflight.machine_fault(full)
    assert line.startswith("results/quick/amp/run.npz.tmp: No space left on device (Errno 28); "
                           "free space on its file system, then run snakemake again")
    assert "\n" not in line
    read_only = OSError(errno.EROFS, os.strerror(errno.EROFS), "figures/quick/x.pdf")
    assert "remount it writable" in preflight.machine_fault(read_only)
    # Everything else is a bug, to be seen with its traceback.
    assert preflight.machine_fault(FileNotFoundError(errno.ENOENT, "missing", "x")) is None
    assert preflight.machine_fault(ValueError("not a machine fault")) is None


def test_a_job_that_meets_a_full_disk_ends_with_that_line_and_leaves_nothing_half_written(tmp_path):
    import errno
    import sys
    from types import SimpleNamespace

    from aimrepro.records.files import atomic_write

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow" / "scripts"))
    try:
        from _job import run_job
    finally:
        sys.path.pop(0)
    output = tmp_path / "results" / "table.csv"
    output.parent.mkdir(parents=True)
    smk = SimpleNamespace(rule="amp_run", input=[], output=[str(output)], log=[str(tmp_path / "job.log")],
                          wildcards={}, params={})
    with pytest.raises(SystemExit) as ended:
        with run_job(smk):
            with atomic_write(output) as handle:
                handle.write("half a table\n")
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(output))
    assert str(ended.value) == (f"aimrepro: rule amp_run: {output}: No space left on device (Errno 28); "
                                "free space on its file system, then run snakemake again: this job's outputs "
                                "were not written, nothing half-written is left")
    assert list(output.parent.iterdir()) == []
    # A bug is not dressed as a fault of the machine.
    with pytest.raises(ZeroDivisionError):
        with run_job(smk):
            1 / 0


def test_the_bytes_already_written_are_counted_and_missing_directories_count_zero(tmp_path):
    (tmp_path / "results" / "quick" / "amp").mkdir(parents=True)
    (tmp_path / "results" / "quick" / "amp" / "a.npz").write_bytes(b"x" * 1000)
    (tmp_path / "results" / "quick" / "b.csv").write_bytes(b"y" * 24)
    assert preflight.bytes_present([tmp_path / "results" / "quick", tmp_path / "figures" / "quick"]) == 1024


def test_a_file_where_the_results_directory_should_be_is_found(tmp_path):
    (tmp_path / "results").write_text("not a directory")
    message = preflight.unwritable([tmp_path / "results" / "quick"])
    assert message == (f"{tmp_path / 'results' / 'quick'} cannot be made: {tmp_path / 'results'} is a file, "
                       "not a directory; move it away")
