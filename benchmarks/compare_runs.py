"""Compare the results of two pipeline runs: the same bytes, or the same pixels for images.

Usage::

    .venv/bin/python benchmarks/compare_runs.py RUN_A RUN_B [--scale quick]

RUN_A and RUN_B are two working directories that ran ``snakemake`` (for example a
clone at one commit and a clone at another).  Every result table (``.csv``,
``.tsv``, ``.npz``) under ``results/<scale>/`` and the claims table
(``claims.md``, but for the commit its header names) must have the same bytes;
every figure's PNG under ``figures/<scale>/`` the same pixels (its metadata
carries the commit, so its bytes differ).  Sidecars (``.json``), logs and PDFs are not compared: they
record times, hashes and commits.  Prints one line per difference and a
summary; exits 0 only if nothing differs and both runs hold the same files.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

#: Compared by their bytes.
BYTES = (".csv", ".tsv", ".npz", ".md")


def _files(root: Path, scale: str) -> dict[str, Path]:
    out = {}
    for top in ("results", "figures"):
        base = root / top / scale
        for path in base.rglob("*"):
            relative = str(path.relative_to(root))
            if path.is_file() and "/logs/" not in relative and (
                    path.suffix in BYTES or (top == "figures" and path.suffix == ".png")):
                out[relative] = path
    return out


#: The commit a claims table's header names (``commit `0123abcd` ``): not a result.
_COMMIT = re.compile(rb"commit `[0-9a-f]+`")


def _digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".md":
        data = _COMMIT.sub(b"commit `-`", data)
    return hashlib.sha256(data).hexdigest()


def _same_pixels(a: Path, b: Path) -> bool:
    import numpy as np
    from matplotlib import image

    first, second = image.imread(a), image.imread(b)
    return first.shape == second.shape and bool(np.array_equal(first, second))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--scale", default="quick")
    args = parser.parse_args(argv)
    a, b = _files(args.run_a, args.scale), _files(args.run_b, args.scale)
    problems = [f"only in {args.run_a}: {name}" for name in sorted(set(a) - set(b))]
    problems += [f"only in {args.run_b}: {name}" for name in sorted(set(b) - set(a))]
    counts = {}
    for name in sorted(set(a) & set(b)):
        suffix = a[name].suffix
        same = _same_pixels(a[name], b[name]) if suffix == ".png" else _digest(a[name]) == _digest(b[name])
        counts.setdefault(suffix, [0, 0])[0 if same else 1] += 1
        if not same:
            problems.append(f"differs ({'pixels' if suffix == '.png' else 'bytes'}): {name}")
    for line in problems:
        print(line)
    summary = ", ".join(f"{kind}: {same} same, {differ} differ" for kind, (same, differ) in sorted(counts.items()))
    print(f"{len(set(a) & set(b))} files compared ({summary}); "
          f"{len(set(a) ^ set(b))} in one run only; {'identical' if not problems else 'DIFFERENT'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
