"""The same bits from the same config: a GD run does not depend on the thread count.

Students are trained in blocks, ``threads`` blocks at once, each BLAS call with
one thread and every operation on one student's numbers: the bytes depend
neither on the threads nor on the blocks.  The BLAS library's own thread
count, as the environment set it when numpy loaded, must not matter either:
threadpoolctl pins it to 1 during the run.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from aimrepro.paper1 import gd
from aimrepro.paper1.data import DatasetSpec, sample_dataset


_COUNTER = itertools.count()


def run_bytes(dataset, **options) -> bytes:
    """The .npz file the workflow would write for this run, as bytes."""
    run = gd.run_on_dataset(dataset, 6, gd.GDSettings(lr=0.1, steps=25, trace_every=5), **options)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"run{next(_COUNTER)}.npz"
        gd.save_run(path, run)
        return path.read_bytes()


@pytest.fixture(scope="module")
def dataset():
    return sample_dataset(DatasetSpec("softmax", 3, 0.5, 16, 0.4, 0, 40, beta=1.0), 5)


def test_one_and_two_threads_give_the_same_bytes(dataset):
    # chunk=2: three blocks of two students, so two threads really share the work
    one = run_bytes(dataset, chunk=2, threads=1)
    two = run_bytes(dataset, chunk=2, threads=2)
    three = run_bytes(dataset, chunk=2, threads=3)
    assert one == two == three


def test_the_blocks_do_not_change_the_bytes(dataset):
    assert run_bytes(dataset, chunk=1) == run_bytes(dataset, chunk=4) == run_bytes(dataset, chunk=6, threads=2)


def test_the_blas_thread_count_of_the_environment_does_not_matter():
    if not any(info["user_api"] == "blas" for info in threadpool_info()):
        pytest.skip("numpy's BLAS is not visible to threadpoolctl here")
    # d = 100, n T = 2 000: the backward GEMM (d × nT)(nT × r) has a long inner dimension,
    # which OpenBLAS 0.3 splits differently with two threads (1e-14 apart when not pinned)
    wide = sample_dataset(DatasetSpec("softmax", 2, 0.5, 100, 0.1, 0, 20, beta=1.0), 5)
    with threadpool_limits(limits=1, user_api="blas"):
        single = run_bytes(wide, chunk=1)
    with threadpool_limits(limits=2, user_api="blas"):
        double = run_bytes(wide, chunk=1, threads=2)
    assert single == double


def test_blocks_split_the_students_evenly_within_the_memory_bound():
    # paper size, T = 2: n T r = 2.4e6 floats per student; 25e6 per step -> 4 blocks of 8,
    # and with 4 threads 6.25e6 per block -> 16 blocks of 2
    assert gd.replica_chunk(12_000, 2, 100, 32) == 8
    assert gd.replica_chunk(12_000, 2, 100, 32, gd.CHUNK_ENTRIES // 4) == 2
    # equal blocks rather than a remainder: at most 3 per block -> 7 students in 3, 3, 1
    assert gd.replica_chunk(10, 1, 1, 7, max_entries=30) == 3
    assert gd.replica_chunk(10, 1, 1, 8, max_entries=30) == 3
    assert gd.replica_chunk(10, 1, 1, 4, max_entries=30) == 2
    assert gd.replica_chunk(50, 2, 25, 8) == 8  # the quick size: one block


def test_the_block_size_is_recorded_and_a_bad_thread_count_is_refused(dataset):
    run = gd.run_on_dataset(dataset, 4, gd.GDSettings(lr=0.1, steps=2), chunk=3)
    assert run.result.settings["chunk"] == 3 and run.result.settings["backend"] == "numpy"
    with pytest.raises(ValueError, match="threads must be an integer >= 1"):
        gd.run_on_dataset(dataset, 4, gd.GDSettings(lr=0.1, steps=2), threads=0)
