"""Faults of the machine, found before any job starts: each as one line naming the file and the remedy.

The workflow calls these before it runs anything (``docs/design.md``,
"Faults"), so that a run that cannot finish stops at once with one line
instead of a traceback from Snakemake or from a job half-way:

* :func:`yaml_problem`: the config file parses, or the line says where not
  (file, line, column, what YAML expected);
* :func:`unwritable`: the results and figures directories can be written
  (a read-only mount, a directory owned by another user);
* :func:`disk_shortfall`: the free space covers what the run will write,
  from the cost model's estimate of each job's outputs less what is already
  there (:func:`bytes_present`);
* :func:`machine_fault`: during a job, an ``OSError`` of the machine (a
  full disk or quota, a read-only file system, a refused permission) as the
  line naming the file and the remedy.

Each returns None when all is well, else the message (without the
``aimrepro:`` prefix the caller adds).  Nothing here writes outside a
temporary probe file that it removes.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["bytes_present", "disk_shortfall", "format_bytes", "machine_fault", "unwritable", "yaml_problem"]


def format_bytes(n: float) -> str:
    """``812 kB``, ``1.3 GB`` (powers of 1000, as ``df -H``)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def yaml_problem(path: str | os.PathLike) -> str | None:
    """Why ``path`` is not a YAML mapping (file, line and column of the fault), or None."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"config file {path} does not exist"
    except (OSError, UnicodeDecodeError) as err:
        return f"config file {path} cannot be read ({err})"
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        context, opened = getattr(err, "context", None), getattr(err, "context_mark", None)
        if context and opened is not None and opened is not mark and opened.line != mark.line:
            # an unclosed bracket or quote is found where the parser gives up, often lines
            # later: the line that opened it is where the mistake usually is
            context = f"{context} opened at line {opened.line + 1}, column {opened.column + 1}"
        return (f"config file {path}{where}: not valid YAML ({problem}"
                + (f", {context}" if context else "") + ")")
    if not isinstance(loaded, dict):
        return f"config file {path}: must be a YAML mapping of keys at its top level, got {type(loaded).__name__}"
    return None


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def unwritable(directories) -> str | None:
    """The first of ``directories`` (or its nearest existing parent) where no file can be created, or None.

    The probe is real: a temporary file is created and removed, so a
    read-only mount, missing permission or an exhausted inode table are all
    found, whatever the permission bits say.
    """
    for directory in directories:
        directory = Path(directory)
        probe_in = directory if directory.is_dir() else _nearest_existing(directory)
        if not probe_in.is_dir():
            return f"{directory} cannot be made: {probe_in} is a file, not a directory; move it away"
        try:
            with tempfile.NamedTemporaryFile(dir=probe_in, prefix=".aimrepro-probe-"):
                pass
        except OSError as err:
            reason = os.strerror(err.errno) if err.errno else str(err)
            remedy = ("make it writable (a read-only mount: remount it, or run from a writable copy "
                      "of the repository)" if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
                      else "free the file system it is on")
            return f"{directory} cannot be written ({reason}, Errno {err.errno}); {remedy}"
    return None


def disk_shortfall(directory: str | os.PathLike, needed_bytes: float, *, margin: float = 1.2) -> str | None:
    """A line when the free space under ``directory`` is below ``margin`` × ``needed_bytes``, else None.

    ``needed_bytes`` is what the planned jobs will write (the cost model's
    disk column); the margin covers logs, temporary files written beside
    their targets before the rename, and the estimate's own error.
    """
    free = shutil.disk_usage(_nearest_existing(Path(directory))).free
    wanted = margin * float(needed_bytes)
    if free >= wanted:
        return None
    return (f"{format_bytes(free)} free under {Path(directory).absolute()}, but this run writes about "
            f"{format_bytes(needed_bytes)} (aimrepro cost; {margin:g}x that with logs and temporary files); "
            "free space there or run a smaller scale")


def bytes_present(directories) -> int:
    """Bytes of the regular files under ``directories`` (missing ones count 0).

    What a rerun will not write again: the disk check subtracts it from the
    scale's planned total.  One ``stat`` per file: a few milliseconds for a
    scale's thousands of results.
    """
    total = 0
    for directory in map(Path, directories):
        if not directory.is_dir():
            continue
        for root, _, files in os.walk(directory):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:
                    continue
    return total


#: errno of the faults a machine has, not the code: each with what the user can do.
_MACHINE_FAULTS = {
    errno.ENOSPC: "free space on its file system",
    errno.EDQUOT: "free space within your quota there",
    errno.EROFS: "the file system is read-only: remount it writable, or run from a writable copy",
    errno.EACCES: "give this user access to it and its directory",
    errno.EPERM: "give this user access to it and its directory",
}


def machine_fault(err: BaseException) -> str | None:
    """The one line for an ``OSError`` of the machine (full disk, quota, read-only, permission), else None.

    ``None`` for every other exception, which stays a bug to see with its
    traceback.  The outputs are written under temporary names and renamed
    when complete (``aimrepro.records.files``), so the line can say that
    nothing half-written is left.
    """
    if not isinstance(err, OSError) or err.errno not in _MACHINE_FAULTS:
        return None
    where = err.filename if err.filename else "a file of this job"
    return (f"{where}: {os.strerror(err.errno)} (Errno {err.errno}); {_MACHINE_FAULTS[err.errno]}, "
            "then run snakemake again: this job's outputs were not written, nothing half-written is left")
