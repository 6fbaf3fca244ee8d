"""Every fault ends clean: each damaged or missing result is repaired by the one command printed.

Three faults on a copy of the tiny paper-1 run (``tiny_run``, never changed
itself): a truncated AMP run, one byte flipped in a dataset with its mtime
kept (then the same with a touch), a deleted sidecar (then the same with the
figures deleted).  Each test follows what the pipeline prints, verbatim:
the refusal of the job that meets the damage (``aimrepro: rule ...: ...;
to rebuild it and what was made from it, run: COMMAND``) or the failed
``aimrepro provenance --check`` (``to repair: COMMAND``), and ends with the
run's bytes as they were and ``provenance --check`` exiting 0.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import printed_remedy, result_bytes, run_cli, run_remedy, run_snakemake

pytestmark = pytest.mark.workflow

FIGURES = ("figures/quick/paper1_fig1.pdf", "figures/quick/paper1_fig2.pdf")
REFUSAL = "made from it, run: "
FAILED_CHECK = "to repair: "


@pytest.fixture()
def damaged(tmp_path, tiny_run) -> tuple[Path, dict[str, bytes]]:
    """A copy of the complete tiny run (mtimes kept) and its bytes, to damage."""
    workdir = tmp_path / "aimrepro"
    shutil.copytree(tiny_run, workdir, symlinks=True)
    return workdir, result_bytes(workdir)


def check(workdir: Path, *targets: str):
    return run_cli("provenance", "--check", *targets, cwd=workdir, timeout=300)


def assert_clean(workdir: Path, reference: dict[str, bytes]) -> None:
    """The run's bytes as before the fault, every lineage verified, nothing left to do."""
    assert result_bytes(workdir) == reference
    for figure in FIGURES:
        assert check(workdir, figure).returncode == 0, check(workdir, figure).stdout
    assert check(workdir, "results/quick", "figures/quick").returncode == 0
    assert "Nothing to be done" in run_snakemake(workdir, "-n").stdout


def refused_run(workdir: Path) -> str:
    """A run that meets the damage: it fails, and its job says why in one line; that line."""
    refused = run_snakemake(workdir, check=False)
    assert refused.returncode != 0
    lines = {line for line in refused.stderr.splitlines() if line.startswith("aimrepro: rule")}
    assert len(lines) == 1, refused.stderr[-3000:]
    return lines.pop()


def one_file(workdir: Path, pattern: str) -> Path:
    return sorted(workdir.glob(pattern))[0]


def test_a_truncated_amp_run_is_refused_and_the_printed_command_rebuilds_it(damaged):
    workdir, reference = damaged
    run = one_file(workdir, "results/quick/amp/hardmax_*/alpha*_seed*.npz")
    run.write_bytes(run.read_bytes()[: run.stat().st_size // 2])

    message = refused_run(workdir)
    assert "amp_summary" in message and str(run.relative_to(workdir)) in message
    remedy = printed_remedy(message, REFUSAL)
    assert remedy == "aimrepro provenance --check --repair results/quick figures/quick && snakemake"
    run_remedy(workdir, remedy)
    assert_clean(workdir, reference)


def flip_one_byte_keeping_mtime(path: Path) -> None:
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_flipped_byte_with_its_mtime_kept_is_found_by_the_check_and_repaired(damaged):
    workdir, reference = damaged
    dataset = one_file(workdir, "results/quick/data/hardmax_*/alpha*_seed*.npz")
    flip_one_byte_keeping_mtime(dataset)
    assert "Nothing to be done" in run_snakemake(workdir, "-n").stdout  # Snakemake sees times

    found = check(workdir, FIGURES[0])
    assert found.returncode == 1
    assert f"{dataset.relative_to(workdir)}: changed since use" in found.stdout
    remedy = printed_remedy(found.stdout, FAILED_CHECK)
    assert remedy == f"aimrepro provenance --check --repair {FIGURES[0]} && snakemake"
    run_remedy(workdir, remedy)
    assert_clean(workdir, reference)


def test_a_flipped_byte_then_touched_is_refused_and_the_printed_command_rebuilds_it(damaged):
    workdir, reference = damaged
    dataset = one_file(workdir, "results/quick/data/hardmax_*/alpha*_seed*.npz")
    flip_one_byte_keeping_mtime(dataset)
    dataset.touch()

    message = refused_run(workdir)
    assert "amp_run" in message and str(dataset.relative_to(workdir)) in message
    run_remedy(workdir, printed_remedy(message, REFUSAL))
    assert_clean(workdir, reference)


def test_a_deleted_sidecar_is_found_by_the_check_and_repaired(damaged):
    workdir, reference = damaged
    run = one_file(workdir, "results/quick/amp/hardmax_*/alpha*_seed*.npz")
    run.with_suffix(".json").unlink()
    assert "Nothing to be done" in run_snakemake(workdir, "-n").stdout

    found = check(workdir, FIGURES[0])
    assert found.returncode == 1
    assert f"{run.relative_to(workdir)}: no sidecar" in found.stdout
    run_remedy(workdir, printed_remedy(found.stdout, FAILED_CHECK))
    assert run.with_suffix(".json").is_file()
    assert_clean(workdir, reference)


def test_a_deleted_sidecar_is_refused_once_its_consumer_reruns(damaged):
    """With the figures deleted the summary reruns: it refuses a run without a sidecar."""
    workdir, reference = damaged
    run = one_file(workdir, "results/quick/amp/hardmax_*/alpha*_seed*.npz")
    run.with_suffix(".json").unlink()
    summary = one_file(run.parent, "summary_seeds*.csv")
    summary.unlink()  # Snakemake keeps an absent intermediate absent while the figure is up to date,
    for figure in FIGURES:  # so the figures go too, as a user would delete them
        for path in (workdir / figure).parent.glob(Path(figure).stem + ".*"):
            path.unlink()

    message = refused_run(workdir)
    assert "amp_summary" in message and "sidecar" in message and "missing" in message
    run_remedy(workdir, printed_remedy(message, REFUSAL))
    assert_clean(workdir, reference)
