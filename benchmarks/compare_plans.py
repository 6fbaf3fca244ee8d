"""Compare what Snakemake plans at two commits: the same jobs, per rule, with the same outputs and inputs.

Usage::

    .venv/bin/python benchmarks/compare_plans.py [--base main] [--head WORKTREE] [--scale quick ...]

Each side is a git commit (``--base``, default ``main``) or the working tree of
this checkout (``--head``, the default: its tracked files as they are now).
Each is exported into a temporary directory, where ``snakemake -n --config
scale=S`` prints every job of the scale without running any, with that
side's own ``aimrepro`` and ``aimrepro_workflow`` first on the path
(``PYTHONPATH``: the venv's installed copy is this checkout's).  Compared per
scale (default: quick, referee, paper), job by job (a job is known by its
first output):

* the number of jobs per rule;
* each job's rule and outputs;
* its data inputs (its inputs outside ``src/`` and ``workflow/scripts/``);
* its threads and resources (``mem_mb``, ``runtime``, ...; not ``tmpdir``).

The code inputs of a job (its script's import closure) are counted apart, as
information: a module split into a package changes them without changing
what is computed.  Prints one line per difference and a summary per scale;
exits 0 only if no job, output or data input differs.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"

#: Inputs under these are code (a script and its import closure), not data.
CODE = ("src/", "workflow/scripts/")

#: A job of a dry run: ``rule NAME:`` (or ``localrule``) then indented ``key: value`` lines.
JOB = re.compile(r"^(?:local)?rule (\S+):\n((?:    \w+: .*\n)+)", re.M)


@dataclass(frozen=True)
class PlannedJob:
    rule: str
    outputs: frozenset[str]
    data: frozenset[str]
    code: frozenset[str]
    threads: int
    resources: str


def export(side: str, into: Path) -> Path:
    """The tracked files of the working tree (``side`` a directory) or of a commit, copied into ``into``."""
    into.mkdir(parents=True)
    if Path(side).is_dir():
        root = Path(side).resolve()
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
        for name in filter(None, listed.stdout.decode().split("\0")):
            if (root / name).is_file():
                (into / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / name, into / name)
    else:
        archive = subprocess.run(["git", "archive", side], cwd=REPO, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _names(text: str) -> frozenset[str]:
    return frozenset(name for name in text.split(", ") if name)


def planned_jobs(tree: Path, scale: str) -> dict[str, PlannedJob]:
    """Every job ``snakemake -n`` plans in ``tree`` at ``scale``, by its first output."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "src"), str(tree / "workflow" / "lib")])}
    done = subprocess.run([str(SNAKEMAKE), "-n", "--config", f"scale={scale}"], cwd=tree,
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"snakemake in {tree} at scale {scale} exited {done.returncode}:\n{done.stderr[-3000:]}")
    jobs = {}
    for match in JOB.finditer(done.stdout + done.stderr):
        fields = dict(line.strip().split(": ", 1) for line in match.group(2).splitlines())
        if "output" not in fields:
            continue  # rule all
        inputs = _names(fields.get("input", ""))
        data = frozenset(name for name in inputs if not name.startswith(CODE))
        # tmpdir is the machine's, not the plan's
        resources = ", ".join(item for item in fields.get("resources", "").split(", ")
                              if not item.startswith("tmpdir="))
        outputs = fields["output"].split(", ")
        job = PlannedJob(match.group(1), frozenset(outputs), data, inputs - data,
                         int(fields.get("threads", 1)), resources)
        if outputs[0] in jobs:
            raise SystemExit(f"{outputs[0]} is planned twice")
        jobs[outputs[0]] = job
    return jobs


def compare(base: dict[str, PlannedJob], head: dict[str, PlannedJob], scale: str) -> list[str]:
    problems = [f"{scale}: only in base: {base[o].rule} {o}" for o in sorted(set(base) - set(head))]
    problems += [f"{scale}: only in head: {head[o].rule} {o}" for o in sorted(set(head) - set(base))]
    for output in sorted(set(base) & set(head)):
        a, b = base[output], head[output]
        for name in ("rule", "outputs", "threads", "resources"):
            if getattr(a, name) != getattr(b, name):
                problems.append(f"{scale}: {output}: {name} {getattr(a, name)} in base, "
                                f"{getattr(b, name)} in head")
        if a.data != b.data:
            problems.append(f"{scale}: {output}: data inputs differ: base only {sorted(a.data - b.data)}, "
                            f"head only {sorted(b.data - a.data)}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="a commit (default main) or a working tree")
    parser.add_argument("--head", default=str(REPO), help="a commit or a working tree (default: this one)")
    parser.add_argument("--scale", action="append", help="a scale to compare (repeatable; default all three)")
    args = parser.parse_args(argv)
    scales = args.scale or ["quick", "referee", "paper"]
    failed = False
    with tempfile.TemporaryDirectory(prefix="compare-plans-") as tmp:
        base_tree, head_tree = export(args.base, Path(tmp) / "base"), export(args.head, Path(tmp) / "head")
        for scale in scales:
            base, head = planned_jobs(base_tree, scale), planned_jobs(head_tree, scale)
            problems = compare(base, head, scale)
            for line in problems:
                print(line)
            rules_a = collections.Counter(job.rule for job in base.values())
            rules_b = collections.Counter(job.rule for job in head.values())
            code = sum(base[o].code != head[o].code for o in set(base) & set(head))
            print(f"{scale}: {len(base)} jobs in base, {len(head)} in head, {len(rules_a)} rules; "
                  f"jobs per rule {'equal' if rules_a == rules_b else 'DIFFER'}; "
                  f"{code} jobs with other code inputs (information); "
                  f"{'same plan' if not problems else f'{len(problems)} differences'}")
            failed |= bool(problems) or rules_a != rules_b
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
