"""The command line refuses runs too large for memory, and ends quietly on a closed pipe.

Refusals are checked in-process (``cli.main``): they must happen before any
science module allocates, so they are instant.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from aimrepro import cli, resources

from conftest import assert_usage_error, changed, executable, run_main

GD = ["gd", "--T", "2", "--rho", "0.5", "--alpha", "0.1", "--d", "60", "--inits", "8",
      "--steps", "1000", "--lr", "0.1", "--seed", "1"]
SGD = ["sgd", "--param", "tied", "--link", "h2", "--T", "1", "--d", "100", "--lr", "0.05",
       "--batch", "256", "--horizon", "3", "--seed", "0"]
AMP = ["amp", "--channel", "hardmax", "--T", "2", "--rho", "0.5", "--alpha", "0.3", "--d", "100",
       "--seed", "1"]
SE = ["se", "--channel", "softmax", "--T", "2", "--alpha", "0.1"]


# The examples (sizes as the parser takes them: integers spelled out), then more.
# A fixed --memory-limit keeps the outcome independent of the machine.
LIMIT = {"memory_limit": "16"}
TOO_LARGE = [
    (changed(GD, steps="1000000000", **LIMIT), ["--steps = 1000000000", "GiB", "limit 16 GiB"]),
    (changed(GD, test_samples="1000000000", **LIMIT), ["--test-samples = 1000000000"]),
    (changed(GD, inits="1000000", **LIMIT), ["--inits = 1000000"]),
    (changed(SGD, d="100000", **LIMIT), ["--d = 100000"]),
    (changed(SGD, batch="1000000000", **LIMIT), ["--batch = 1000000000"]),
    (changed(SGD, horizon="1e12", **LIMIT), ["--horizon = 1e+12", "5e+14 steps"]),
    (changed(AMP, channel="softmax", T="1000", **LIMIT), ["--T = 1000"]),
    (changed(SGD, lr="1e-300", **LIMIT), ["--lr = 1e-300", "steps"]),
    (changed(SGD, lr="1e-320", **LIMIT), ["--lr = 9.99989e-321", "inf GiB"]),
    (changed(SGD, param="direct", d="60000", **LIMIT), ["--d = 60000"]),
    (changed(SGD, param="untied", rho="1000", **LIMIT), ["--rho = 1000"]),
    (changed(SGD, T="1000000", **LIMIT), ["--T = 1000000"]),
    (changed(SGD, records="10000000000", **LIMIT), ["--records = 10000000000"]),
    (changed(AMP, max_iter="1000000000000", **LIMIT), ["--max-iter = 1000000000000"]),
    (changed(AMP, d="3000", alpha="1", **LIMIT), ["--d = 3000"]),
    (changed(AMP, alpha="2000", **LIMIT), ["--alpha = 2000"]),
    (changed(GD, rho="100000", **LIMIT), ["--rho = 100000"]),
    (changed(GD, steps="100000", memory_limit="0.01"), ["--steps", "limit 0.01 GiB (--memory-limit)"]),
]
OTHER_REFUSALS = [
    (changed(SE, rho="1e-10"), ["--rho", "[0.0001, 1e+14]", "1e-10"]),
    (changed(SE, rho="1e50"), ["--rho", "[0.0001, 1e+14]", "1e+50"]),
    (changed(SE, rho="1e308"), ["--rho", "[0.0001, 1e+14]", "1e+308"]),
    (changed(AMP, rho="1e-7"), ["--rho", "[0.0001, 1e+14]"]),
    (changed(GD, rho="1e20"), ["--rho", "[0.0001, 1e+14]"]),
    (changed(SGD, lr="10", horizon="0.1"), ["--horizon = 0.1", "less than one SGD step", "0.4", "--lr"]),
    (changed(SGD, param="direct", lr="30", horizon="0.1"), ["--horizon", "lr/d = 0.3"]),
    (changed(AMP, alpha="1e6", d="20"), ["--alpha", "sequences", "1e+08"]),
    (changed(GD, memory_limit="1e-6"), ["--memory-limit", "ordinary sizes", "limit of 1e-06 GiB"]),
    (changed(GD, memory_limit="0"), ["--memory-limit", "> 0"]),
    (changed(SGD, memory_limit="nan"), ["--memory-limit", "finite"]),
    (changed(AMP, memory_limit="inf"), ["--memory-limit", "finite"]),
]


@pytest.mark.parametrize(("args", "names"), TOO_LARGE + OTHER_REFUSALS,
                         ids=[" ".join(a[:1] + a[-4:]) for a, _ in TOO_LARGE + OTHER_REFUSALS])
def test_refused_with_one_line_naming_the_option(capsys, args, names):
    assert_usage_error(run_main(capsys, args), names)


def test_the_default_limit_is_nine_tenths_of_the_available_memory(capsys, monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: 2.0 * 2 ** 30)
    done = run_main(capsys, changed(GD, inits="100000"))
    assert_usage_error(done, ["--inits = 100000", "limit 1.8 GiB (90% of the available memory; --memory-limit"])


def test_a_run_that_fits_is_not_refused(capsys, monkeypatch):
    """The check passes a small run (the run itself is cut short here: not the point)."""
    from aimrepro.paper2 import sgd

    called = []

    def cut_short(run, **options):
        called.append(run.spec.d)
        raise MemoryError("cut short")

    monkeypatch.setattr(sgd.SGDRun, "run", cut_short)
    done = run_main(capsys, changed(SGD, memory_limit="1"))
    assert done.returncode == 1 and "cut short" in done.stderr
    assert called == [100]


def test_running_out_of_memory_anyway_is_one_line(capsys, monkeypatch):
    """An estimate below the machine's memory that still fails: one line, status 1."""
    from aimrepro.paper2 import sgd

    def exhausted(run, **options):
        raise MemoryError("Unable to allocate 37.3 GiB for an array")

    monkeypatch.setattr(sgd.SGDRun, "run", exhausted)
    done = run_main(capsys, changed(SGD, memory_limit="1e300"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "aimrepro: out of memory: Unable to allocate 37.3 GiB for an array\n"


def test_closed_pipe_ends_quietly():
    """`aimrepro sgd ... | head -1`: status 141, nothing on stderr (no BrokenPipeError)."""
    args = [executable("aimrepro"), "sgd", "--param", "tied", "--link", "h2", "--T", "1", "--d",
            "30", "--lr", "0.01", "--batch", "8", "--horizon", "0.4", "--seed", "2",
            "--records", "2000"]
    # ~300 records of ~600 bytes: more than a pipe's buffer, so the writer blocks until
    # the reader leaves, and its next write fails
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout.readline().startswith(b"{")
        process.stdout.close()
        stderr = process.stderr.read()
        status = process.wait(timeout=300)
    assert status == 141 and stderr == b""


def test_se_still_computes_at_the_ends_of_the_validated_range(capsys):
    for rho in ("1e-4", "1e14"):
        done = run_main(capsys, changed(SE, rho=rho))
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("\n") == 1


def test_entry_point_returns_the_status():
    """The console script is ``sys.exit(main())``: a quiet pipe end must come back as 141."""
    code = subprocess.run([sys.executable, "-c", "import sys; from aimrepro import cli; "
                           "cli._main = lambda argv: (_ for _ in ()).throw(BrokenPipeError()); "
                           "sys.exit(cli.main([]))"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert code.returncode == 141 and code.stderr == ""
