"""Run records: atomic writes, CSV tables, provenance sidecars and lineage.

Every result and figure of the pipeline has a *sidecar*: a JSON file in the
same directory with the same stem (``alpha_log_0.03_10_n24.csv`` →
``alpha_log_0.03_10_n24.json``) that records how the file was made (DESIGN.md,
"Provenance sidecar").  :func:`lineage` follows the sidecars of a file's
inputs recursively, and :func:`render_lineage` prints that tree; the
``aimrepro provenance FILE`` command is a thin wrapper around both.

Nothing here knows about Snakemake or reads the config: the workflow scripts
pass everything in explicitly.

Sidecar fields (schema ``aimrepro.sidecar/1``)
----------------------------------------------
``outputs``
    ``{path: sha256}`` of the files the sidecar describes (a figure has a PDF
    and a PNG), written *after* them, so a later edit of a result is
    detectable.
``rule``, ``params``, ``seed``, ``config_hash``
    What was computed: the step's name, its full parameters (wildcards,
    rule params and solver settings), the random seed (``null`` for
    deterministic steps) and :func:`config_hash` of the whole config.
``inputs``, ``code``
    ``{path: sha256}`` of the data inputs and, separately, of the source
    files whose code produced the output.
``aimrepro_version``, ``aimrepro_path``, ``git``, ``versions``, ``host``, ``workdir``
    Software state: package version and location, ``{"commit", "dirty"}`` of the
    repository the step ran in, versions of python/numpy/scipy/matplotlib/
    snakemake where importable, the host name and the working directory.
``slurm_job_id``
    The Slurm job the step ran in (``$SLURM_JOB_ID``, a string), or ``null``
    outside Slurm: with ``sacct``/``scontrol show job`` it leads to the
    scheduler's record of the run (node, memory, exit code).
``started``, ``ended``, ``wall_seconds``
    ISO 8601 UTC timestamps (``2026-11-30T13:08:00.123Z``) and their
    difference.
``diagnostics``
    Solver diagnostics (``converged``, ``iterations``, ``residual``, ...).

Paths inside a sidecar are stored as given by the caller, normally relative
to the workflow's working directory; :func:`lineage` resolves them against
the directory the workflow ran in, inferred from where the described file
lives now, so a moved copy of the repository still resolves.

CSV tables
----------
:func:`write_table` / :func:`read_table` store a table of equal-length
columns as plain CSV: one header row of column names, then one row per
point.  Floats are written with ``repr`` (shortest round-trip form; ``nan``,
``inf`` and ``-inf`` as such), integers as integers and booleans as ``true``
/ ``false``.  Words rather than 0/1 keep a boolean column distinguishable
from an integer column on reading, for people and for :func:`read_table`
alike.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import glob
import hashlib
import io
import json
import logging
import math
import os
import platform
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata as _metadata
from pathlib import Path
from typing import Any

import numpy as np

import aimrepro

__all__ = [
    "SIDECAR_SCHEMA",
    "DamagedInputError",
    "LineageCheck",
    "LineageNode",
    "atomic_path",
    "atomic_write",
    "capture_log",
    "check_lineage",
    "config_hash",
    "file_sha256",
    "format_timestamp",
    "git_state",
    "lineage",
    "read_sidecar",
    "read_table",
    "remove_stale_temporaries",
    "render_lineage",
    "sidecar_path",
    "software_versions",
    "utc_now",
    "verify_input",
    "write_sidecar",
    "write_table",
]

SIDECAR_SCHEMA = "aimrepro.sidecar/1"

#: Packages whose versions every sidecar records, where importable.
_VERSIONED_PACKAGES = ("numpy", "scipy", "matplotlib", "snakemake")

_TRUE_WORDS = ("true", "false")

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike


# --------------------------------------------------------------------------
# Atomic writes
# --------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it onto ``path`` on success.

    For writers that insist on a file name (``matplotlib``'s ``savefig``,
    ``numpy.savez``).  The temporary file lives in the same directory, so the
    final :func:`os.replace` is atomic: readers see either the old file or the
    complete new one, never a half-written file.  If the body raises, the
    temporary file is removed and ``path`` is left untouched.

    Parameters
    ----------
    path : str or os.PathLike
        Final location.  Its parent directory is created if missing.

    Yields
    ------
    pathlib.Path
        Where to write.  It keeps ``path``'s suffix (some writers infer the
        format from it).
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        dir=final.parent, prefix=f".{final.name}.", suffix=f".tmp{final.suffix}"
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _fsync_file(tmp)
        # mkstemp creates mode 0600; give the result the permissions a plain
        # open() would have given it, so other users can read the results.
        os.chmod(tmp, 0o666 & ~_current_umask())
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", **open_kwargs: Any) -> Iterator[io.IOBase]:
    """Open a temporary file next to ``path`` for writing; replace ``path`` on success.

    Parameters
    ----------
    path : str or os.PathLike
        Final location.
    mode : {"w", "wb"}
        Text or binary.  Text mode defaults to UTF-8 and ``newline=""`` is
        left to the caller (the CSV writers pass it).
    **open_kwargs
        Passed to :func:`open`.

    Yields
    ------
    file object
        Open for writing; closed before the replace.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    if mode == "w":
        open_kwargs.setdefault("encoding", "utf-8")
    with atomic_path(path) as tmp:
        with open(tmp, mode, **open_kwargs) as handle:
            yield handle


def remove_stale_temporaries(path: PathLike) -> list[Path]:
    """Delete temporaries that :func:`atomic_path` left beside ``path`` when killed.

    A process killed with SIGKILL cannot remove its temporary file; the
    next attempt at the same output calls this first, so no half-written
    file stays behind.

    Returns
    -------
    list of pathlib.Path
        What was removed.
    """
    final = Path(path)
    if not final.parent.is_dir():
        return []
    removed = []
    for stale in final.parent.glob(f".{glob.escape(final.name)}.*.tmp{glob.escape(final.suffix)}"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed.append(stale)
    return removed


def _fsync_file(path: Path) -> None:
    # Flush to disk before the rename, so that a crash cannot leave the final
    # name pointing at an empty file.
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --------------------------------------------------------------------------
# Hashes, times, software state
# --------------------------------------------------------------------------


def file_sha256(path: PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def config_hash(config: Mapping[str, Any]) -> str:
    """sha256 of a config mapping's canonical JSON form.

    Canonical: keys sorted, no whitespace, ASCII only, so equal configs hash
    equally whatever the key order of the YAML they came from.

    Parameters
    ----------
    config : mapping
        JSON-serialisable (numpy scalars and arrays are converted).

    Returns
    -------
    str
        64 hex digits.
    """
    canonical = json.dumps(
        _jsonable(config), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def utc_now() -> _dt.datetime:
    """The current time as a timezone-aware UTC datetime."""
    return _dt.datetime.now(_dt.timezone.utc)


def format_timestamp(moment: _dt.datetime) -> str:
    """ISO 8601 in UTC with millisecond precision and a ``Z`` suffix."""
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware (use utc_now())")
    utc = moment.astimezone(_dt.timezone.utc)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def git_state(repo: PathLike | None = None) -> dict[str, Any]:
    """Commit and dirty flag of the git repository containing ``repo``.

    Parameters
    ----------
    repo : path, optional
        A directory inside the repository; default the current directory.

    Returns
    -------
    dict
        ``{"commit": <40 hex digits or "unknown">, "dirty": bool or None}``.
        ``"unknown"``/``None`` when git is missing, ``repo`` is not in a
        repository, or the repository has no commit yet.  ``dirty`` counts
        untracked (not ignored) files too: a new, uncommitted module can
        change results as much as an edited one.
    """
    where = str(repo) if repo is not None else os.getcwd()
    commit = _run_git(where, "rev-parse", "--verify", "--quiet", "HEAD")
    if commit is None or len(commit) < 40:
        return {"commit": "unknown", "dirty": None}
    status = _run_git(where, "status", "--porcelain")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def _run_git(where: str, *args: str) -> str | None:
    try:
        completed = subprocess.run(
            ["git", "-C", where, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.strip()


def software_versions() -> dict[str, str]:
    """Versions of python and of the numerical/workflow packages that are installed."""
    versions = {"python": platform.python_version()}
    for name in _VERSIONED_PACKAGES:
        try:
            versions[name] = _metadata.version(name)
        except _metadata.PackageNotFoundError:
            continue
    return versions


# --------------------------------------------------------------------------
# Sidecars
# --------------------------------------------------------------------------


def sidecar_path(result: PathLike) -> Path:
    """The sidecar of a result: same directory, the result's stem + ``.json``.

    >>> str(sidecar_path("results/quick/se/x/alpha_log_0.03_10_n24.csv"))
    'results/quick/se/x/alpha_log_0.03_10_n24.json'
    """
    result = Path(result)
    if result.suffix == ".json":
        raise ValueError(f"a sidecar describes a non-JSON result, got {result}")
    return result.with_suffix(".json")


def write_sidecar(
    result_path: PathLike | Sequence[PathLike],
    *,
    rule: str,
    params: Mapping[str, Any],
    inputs: Iterable[PathLike],
    code: Iterable[PathLike],
    diagnostics: Mapping[str, Any],
    started: _dt.datetime,
    ended: _dt.datetime,
    seed: int | None = None,
    config_hash: str | None = None,
    repo: PathLike | None = None,
    known_hashes: Mapping[str, str] | None = None,
) -> Path:
    """Write the provenance sidecar of a finished result, atomically.

    Call it after the result is complete: the sidecar stores the result's
    sha256.

    Parameters
    ----------
    result_path : path or sequence of paths
        The result, or several outputs sharing one stem and directory (a
        figure's ``.pdf`` and ``.png``).  The sidecar goes to
        ``sidecar_path(result_path[0])``.
    rule : str
        Name of the step that made the result.
    params : mapping
        Full parameters: wildcards, rule params, solver settings.  Must be
        JSON-serialisable (numpy scalars/arrays are converted); never put
        commit hashes or times here.
    inputs : iterable of paths
        Data inputs; their sha256 is recorded.
    code : iterable of paths
        Source files the step ran (package modules, the script); their
        sha256 is recorded separately from the data.
    diagnostics : mapping
        Solver diagnostics, e.g. ``converged``, ``iterations``, ``residual``.
    started, ended : datetime
        Timezone-aware start and end of the computation (:func:`utc_now`).
    seed : int, optional
        Random seed; ``None`` for deterministic steps.
    config_hash : str, optional
        :func:`config_hash` of the config the step ran under.
    repo : path, optional
        Where to ask git for the commit; default the current directory.
    known_hashes : mapping, optional
        ``{path: sha256}`` already computed for some ``inputs`` (by
        :func:`verify_input`), so large inputs are not read twice.

    Returns
    -------
    pathlib.Path
        The sidecar's path.
    """
    outputs = [Path(result_path)] if isinstance(result_path, (str, os.PathLike)) else [
        Path(p) for p in result_path
    ]
    if not outputs:
        raise ValueError("write_sidecar needs at least one result path")
    target = sidecar_path(outputs[0])
    for other in outputs[1:]:
        if sidecar_path(other) != target:
            raise ValueError(
                f"outputs sharing a sidecar need the same directory and stem, "
                f"got {outputs[0]} and {other}"
            )
    if ended < started:
        raise ValueError(f"ended ({ended}) is before started ({started})")

    record = {
        "schema": SIDECAR_SCHEMA,
        "outputs": {str(p): file_sha256(p) for p in outputs},
        "rule": rule,
        "params": _jsonable(dict(params)),
        "seed": seed,
        "config_hash": config_hash,
        "inputs": {str(p): (known_hashes or {}).get(str(p)) or file_sha256(p) for p in inputs},
        "code": {str(p): file_sha256(p) for p in code},
        "diagnostics": _jsonable(dict(diagnostics)),
        "aimrepro_version": aimrepro.__version__,
        # Where the imported package lives: the `code` hashes are of the
        # repository's files, which an installed copy elsewhere may not match.
        "aimrepro_path": os.path.dirname(os.path.abspath(aimrepro.__file__)),
        "git": git_state(repo),
        "versions": software_versions(),
        "host": socket.gethostname(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "workdir": os.getcwd(),
        "started": format_timestamp(started),
        "ended": format_timestamp(ended),
        "wall_seconds": round((ended - started).total_seconds(), 3),
    }
    with atomic_write(target) as handle:
        # allow_nan=False: NaN/inf were already mapped to strings/None by
        # _jsonable, and the file must stay strict JSON for other tools.
        json.dump(record, handle, indent=2, allow_nan=False)
        handle.write("\n")
    return target


def read_sidecar(path: PathLike) -> dict[str, Any]:
    """Read a sidecar, given either the sidecar itself or the result it describes."""
    path = Path(path)
    side = path if path.suffix == ".json" else sidecar_path(path)
    if not side.exists():
        raise FileNotFoundError(f"no sidecar {side}")
    record, malformed = _load_sidecar(side)
    if record is None:
        raise ValueError(f"{side} is not an aimrepro sidecar, or a malformed one: {malformed}")
    return record


class DamagedInputError(RuntimeError):
    """A result no longer matches its sidecar; the message is one line saying what to do."""


def verify_input(path: PathLike) -> str:
    """Check a pipeline result against its sidecar before using it; return its sha256.

    A result whose bytes differ from the sha256 its own sidecar recorded was
    changed or damaged after it was made (a truncated table, a hand edit, a
    half-copied file): a job must not draw from it.  A file without a
    sidecar (a raw input) is only hashed.

    Parameters
    ----------
    path : path
        The input file.

    Returns
    -------
    str
        The file's sha256 (hashed once; the caller records it).

    Raises
    ------
    DamagedInputError
        The file differs from its sidecar, or the sidecar is unreadable or
        does not describe it.  One line naming the file and the remedy.
    """
    path = Path(path)
    digest = file_sha256(path)
    side = sidecar_path(path)
    if not side.exists():
        return digest
    remedy = f"delete {path} and rerun snakemake to rebuild it"
    try:
        record = read_sidecar(side)
    except (OSError, ValueError) as err:
        raise DamagedInputError(f"input {path}: {err}; {remedy}") from None
    recorded = next((sha for name, sha in record["outputs"].items()
                     if Path(name).name == path.name), None)
    if recorded is None:
        raise DamagedInputError(f"input {path}: its sidecar {side} does not describe it; {remedy}")
    if recorded != digest:
        raise DamagedInputError(
            f"input {path} does not match its sidecar {side} (sha256 differs: changed or "
            f"damaged after it was made); {remedy}")
    return digest


def _jsonable(value: Any) -> Any:
    """Convert numpy types and non-finite floats into strict-JSON values.

    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"``
    (``float(...)`` reads them back): JSON has no literal for them, and
    ``rho = inf`` is a legitimate parameter.
    """
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_jsonable(v) for v in items]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot record {type(value).__name__} {value!r} in a sidecar")


# --------------------------------------------------------------------------
# Lineage
# --------------------------------------------------------------------------


@dataclass
class LineageNode:
    """One file in a lineage tree.

    Attributes
    ----------
    path : str
        The path as recorded by the consumer (or given by the user, at the root).
    resolved : pathlib.Path
        Where the file was looked up.
    sidecar : dict or None
        Its sidecar, or ``None`` if it has none (a raw input), it is missing
        or it is malformed.
    status : str
        ``"ok"``; ``"missing"`` (file absent); ``"not a regular file"``;
        ``"no sidecar"``; ``"malformed sidecar: <why>"``; ``"modified"``
        (its bytes differ from what its own sidecar recorded); ``"changed
        since use"`` (differs from what the consumer recorded); ``"cycle"``
        (it is among its own inputs); suffixed `` (depth limit)`` where the
        walk stopped.
    children : list of LineageNode
        The data inputs its sidecar lists.
    code : dict
        ``{path: sha256}`` of the code that made it.
    code_status : dict
        ``{path: "ok" | "changed" | "missing"}``: each code file as it is
        now against the recorded hash.
    """

    path: str
    resolved: Path
    sidecar: dict[str, Any] | None
    status: str
    children: list[LineageNode] = field(default_factory=list)
    code: dict[str, str] = field(default_factory=dict)
    code_status: dict[str, str] = field(default_factory=dict)

    def walk(self) -> Iterator[LineageNode]:
        """This node and every node below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


def lineage(path: PathLike, *, max_depth: int = 32) -> LineageNode:
    """Follow sidecars from a result or figure down to its raw inputs.

    Never raises on a damaged record: a malformed sidecar (not JSON, wrong
    schema, a list where a mapping belongs), an input that is not a regular
    file (``/dev/zero``) or a cycle in the inputs becomes the status of its
    node, and the walk stops there.  Each file is hashed at most once.

    Parameters
    ----------
    path : path
        A result or figure (or its sidecar).
    max_depth : int
        Deepest level followed (a guard beside the cycle check).

    Returns
    -------
    LineageNode
        The root; each node's ``children`` are its recorded data inputs.

    Raises
    ------
    FileNotFoundError
        If neither ``path`` nor its sidecar exists.
    """
    root = Path(path)
    if root.suffix == ".json" and root.is_file():
        # Given the sidecar itself: start from the first output it describes,
        # which lives in the same directory.
        record, _ = _load_sidecar(root)
        if record is not None:
            root = root.with_name(Path(next(iter(record["outputs"]))).name)
    if not root.exists() and not sidecar_path(root).exists():
        raise FileNotFoundError(f"no such file: {path}")
    walker = _LineageWalker(max_depth)
    return walker.node(str(path), root.resolve(), expected_sha=None, ancestors=())


@dataclass
class LineageCheck:
    """Outcome of :func:`check_lineage`: every problem found, one line each."""

    root: LineageNode
    problems: list[str]
    n_files: int
    n_code_files: int

    @property
    def ok(self) -> bool:
        return not self.problems


def check_lineage(path: PathLike, *, max_depth: int = 32) -> LineageCheck:
    """Verify a result and everything it was made from.

    Passes only if every file of the lineage exists, is a regular file, has
    a well-formed sidecar whose recorded sha256 it still matches, still
    matches the hash its consumer recorded when it used it, and if every code
    file recorded in those sidecars still has the recorded hash.

    Parameters
    ----------
    path : path
        A result or figure (or its sidecar).

    Returns
    -------
    LineageCheck
        ``problems`` lists ``"<path>: <what differs>"``, in walk order,
        each file once.
    """
    root = lineage(path, max_depth=max_depth)
    problems: list[str] = []
    files: set[Path] = set()
    code_files: set[str] = set()
    reported: set[tuple[Path, str]] = set()
    for node in root.walk():
        files.add(node.resolved)
        findings = [] if node.status == "ok" else [node.status]
        findings += [f"code {code}: {state}" for code, state in node.code_status.items()
                     if state != "ok"]
        code_files.update(node.code_status)
        for finding in findings:
            if (node.resolved, finding) not in reported:
                reported.add((node.resolved, finding))
                problems.append(f"{node.path}: {finding}")
    return LineageCheck(root=root, problems=problems, n_files=len(files),
                        n_code_files=len(code_files))


def _load_sidecar(side: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a well-formed sidecar, else (None, why it is malformed)."""
    if not side.is_file():
        return None, "not a regular file"
    try:
        with open(side, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return None, f"not JSON ({type(err).__name__})"
    if not isinstance(record, dict):
        return None, f"a JSON {type(record).__name__}, not an object"
    if record.get("schema") != SIDECAR_SCHEMA:
        return None, f"schema {record.get('schema')!r}, expected {SIDECAR_SCHEMA!r}"
    for key in ("outputs", "inputs", "code"):
        entries = record.get(key)
        if not isinstance(entries, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in entries.items()):
            return None, f"{key!r} is not a mapping of path to sha256"
    if not record["outputs"]:
        return None, "'outputs' is empty"
    if not isinstance(record.get("diagnostics", {}), (dict, type(None))):
        return None, "'diagnostics' is not a mapping"
    return record, None


class _LineageWalker:
    """Builds lineage nodes, hashing each file once."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self._hashes: dict[Path, str] = {}

    def sha(self, path: Path) -> str:
        if path not in self._hashes:
            self._hashes[path] = file_sha256(path)
        return self._hashes[path]

    def node(self, recorded: str, resolved: Path, *, expected_sha: str | None,
             ancestors: tuple[Path, ...]) -> LineageNode:
        if resolved in ancestors:
            return LineageNode(path=recorded, resolved=resolved, sidecar=None, status="cycle")
        side = sidecar_path(resolved) if resolved.suffix != ".json" else None
        record, malformed = (None, None)
        if side is not None and side.exists():
            record, malformed = _load_sidecar(side)

        if not resolved.exists():
            status = "missing"
        elif not resolved.is_file():
            status = "not a regular file"
        elif expected_sha is not None and self.sha(resolved) != expected_sha:
            status = "changed since use"
        elif malformed is not None:
            status = f"malformed sidecar: {malformed}"
        elif record is None:
            status = "no sidecar"
        else:
            own = _recorded_output_sha(record, resolved)
            status = "modified" if own is not None and own != self.sha(resolved) else "ok"

        node = LineageNode(path=recorded, resolved=resolved, sidecar=record, status=status)
        if record is None or status == "not a regular file":
            return node
        workdir = _workdir_of(resolved, record, _recorded_name(record, resolved))
        node.code = dict(record["code"])
        node.code_status = {code: self._code_state(_resolve(Path(code), workdir), sha)
                            for code, sha in node.code.items()}
        if len(ancestors) >= self.max_depth:
            node.status += " (depth limit)"
            return node
        for child, sha in record["inputs"].items():
            node.children.append(self.node(child, _resolve(Path(child), workdir), expected_sha=sha,
                                           ancestors=(*ancestors, resolved)))
        return node

    def _code_state(self, path: Path, sha: str) -> str:
        if not path.is_file():
            return "missing"
        return "ok" if self.sha(path) == sha else "changed"


def _recorded_name(record: Mapping[str, Any], resolved: Path) -> str:
    """The key under which ``record`` lists ``resolved`` among its outputs."""
    for name in record.get("outputs", {}):
        if Path(name).name == resolved.name:
            return name
    return next(iter(record.get("outputs", {str(resolved): None})))


def _recorded_output_sha(record: Mapping[str, Any], resolved: Path) -> str | None:
    return record.get("outputs", {}).get(_recorded_name(record, resolved))


def _workdir_of(actual: Path, record: Mapping[str, Any], recorded_name: str) -> Path:
    """The directory the step ran in, as seen from where its output is now.

    If the output was recorded as ``figures/quick/f.pdf`` and now lives at
    ``/copy/figures/quick/f.pdf``, the step's working directory is
    ``/copy``.  Falls back to the recorded ``workdir``.
    """
    recorded = Path(recorded_name)
    actual = actual.resolve()
    if recorded.is_absolute():
        return Path(record.get("workdir", "/"))
    n_parts = len(recorded.parts)
    if tuple(actual.parts[-n_parts:]) == recorded.parts:
        return Path(*actual.parts[:-n_parts]) if len(actual.parts) > n_parts else Path("/")
    return Path(record.get("workdir", os.getcwd()))


def _resolve(path: Path, workdir: Path) -> Path:
    return path if path.is_absolute() else (workdir / path)


def render_lineage(node: LineageNode, *, show_code: bool = False) -> str:
    """Render a lineage tree as indented text, one file per line.

    Each line gives the path, the rule that made it, its commit (marked
    ``+dirty`` when uncommitted changes were present), its end time, the
    Slurm job it ran in, its solver diagnostics when present, and a
    ``[status]`` unless ``ok``.

    Parameters
    ----------
    node : LineageNode
        From :func:`lineage`.
    show_code : bool
        Also list each step's code files with abbreviated sha256.
    """
    lines: list[str] = []
    _render(node, lines, prefix="", child_prefix="", show_code=show_code)
    return "\n".join(lines)


def _render(node: LineageNode, lines: list[str], *, prefix: str, child_prefix: str,
            show_code: bool) -> None:
    lines.append(prefix + node.path + _describe(node))
    entries: list[tuple[str, LineageNode | None]] = []
    if show_code:
        entries += [(f"code {p}  sha256:{sha[:12]}", None) for p, sha in node.code.items()]
    entries += [("", child) for child in node.children]
    for i, (text, child) in enumerate(entries):
        last = i == len(entries) - 1
        branch, extend = ("└── ", "    ") if last else ("├── ", "│   ")
        if child is None:
            lines.append(child_prefix + branch + text)
        else:
            _render(child, lines, prefix=child_prefix + branch,
                    child_prefix=child_prefix + extend, show_code=show_code)


def _describe(node: LineageNode) -> str:
    parts: list[str] = []
    record = node.sidecar
    if record is not None:
        git = record.get("git", {})
        commit = str(git.get("commit", "unknown"))
        commit = commit[:10] if commit != "unknown" else commit
        if git.get("dirty"):
            commit += "+dirty"
        parts.append(f"rule {record.get('rule')}")
        parts.append(f"commit {commit}")
        parts.append(f"ended {record.get('ended')}")
        if record.get("slurm_job_id"):
            parts.append(f"slurm job {record['slurm_job_id']}")
        diag = record.get("diagnostics") or {}
        if "converged" in diag:
            summary = f"converged={diag['converged']}"
            if "n_unconverged" in diag and "n_points" in diag:
                summary += f" ({diag['n_points'] - diag['n_unconverged']}/{diag['n_points']} points)"
            parts.append(summary)
    text = "  (" + ", ".join(parts) + ")" if parts else ""
    if node.status != "ok":
        text += f"  [{node.status}]"
    return text


# --------------------------------------------------------------------------
# CSV tables
# --------------------------------------------------------------------------


def write_table(path: PathLike, columns: Mapping[str, Any]) -> None:
    """Write equal-length columns as a CSV table, atomically.

    Parameters
    ----------
    path : path
        Destination (``.csv``).
    columns : mapping of str to 1-D array-like
        Ordered column name → values.  Column dtype decides the format:
        bool → ``true``/``false``; integer → decimal; anything else → float
        via ``repr`` (exact round trip, ``nan``/``inf`` spelt out).
    """
    names = list(columns)
    if not names:
        raise ValueError("a table needs at least one column")
    arrays = [np.asarray(columns[name]) for name in names]
    lengths = {a.shape for a in arrays}
    if any(a.ndim != 1 for a in arrays) or len(lengths) != 1:
        shapes = {name: a.shape for name, a in zip(names, arrays)}
        raise ValueError(f"table columns must be 1-D and of equal length, got {shapes}")
    for name in names:
        if not name or any(ch in name for ch in ',"\n\r'):
            raise ValueError(f"column names must be non-empty, without commas or quotes: {name!r}")
    formatters = [_cell_formatter(a, name) for name, a in zip(names, arrays)]
    with atomic_write(path, newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names)
        for row in zip(*arrays):
            writer.writerow([fmt(v) for fmt, v in zip(formatters, row)])


def _cell_formatter(array: np.ndarray, name: str):
    if array.dtype == bool:
        return lambda v: "true" if v else "false"
    if np.issubdtype(array.dtype, np.integer):
        return lambda v: str(int(v))
    if np.issubdtype(array.dtype, np.floating):
        return lambda v: repr(float(v))
    raise TypeError(f"column {name!r} has unsupported dtype {array.dtype}")


def read_table(path: PathLike) -> dict[str, np.ndarray]:
    """Read a table written by :func:`write_table`.

    Returns
    -------
    dict of str to numpy.ndarray
        In file order.  A column whose cells are all ``true``/``false`` is
        bool, all integers → int64, otherwise float64.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        raise ValueError(f"{path}: empty file, expected a header row")
    names, body = rows[0], rows[1:]
    for i, row in enumerate(body, start=2):
        if len(row) != len(names):
            raise ValueError(f"{path}:{i}: {len(row)} cells, header has {len(names)}")
    cells = list(zip(*body)) if body else [() for _ in names]
    return {name: _parse_column(col, name, path) for name, col in zip(names, cells)}


def _parse_column(cells: Sequence[str], name: str, path: PathLike) -> np.ndarray:
    if cells and all(c in _TRUE_WORDS for c in cells):
        return np.array([c == "true" for c in cells], dtype=bool)
    try:
        if cells and all(c.lstrip("-").isdigit() for c in cells):
            return np.array([int(c) for c in cells], dtype=np.int64)
        return np.array([float(c) for c in cells], dtype=float)
    except ValueError as err:
        raise ValueError(f"{path}: column {name!r} is not numeric: {err}") from None


# --------------------------------------------------------------------------
# Logging of a run
# --------------------------------------------------------------------------


@contextlib.contextmanager
def capture_log(log_path: PathLike, *, level: int = logging.INFO) -> Iterator[logging.Logger]:
    """Send ``logging`` records and ``stderr`` of this process to a log file.

    Used by the workflow scripts so that progress messages of the science
    code (``logging.getLogger("aimrepro...")``), warnings and tracebacks end
    up in the step's log.  An exception raised in the body is logged with
    its traceback and re-raised.

    Parameters
    ----------
    log_path : path
        The log file (truncated).
    level : int
        Threshold for the ``aimrepro`` loggers.  Other libraries log at
        WARNING and above only (fontTools alone writes hundreds of INFO lines
        per saved PDF).

    Yields
    ------
    logging.Logger
        The ``aimrepro`` logger, for the script's own messages.
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    run_logger = logging.getLogger("aimrepro")
    old_levels = (root.level, run_logger.level)
    with open(log_path, "w", encoding="utf-8", buffering=1) as stream:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
        run_logger.setLevel(level)
        logging.captureWarnings(True)
        old_stderr = sys.stderr
        sys.stderr = stream
        try:
            yield run_logger
        except BaseException:
            run_logger.exception("step failed")
            raise
        finally:
            sys.stderr = old_stderr
            logging.captureWarnings(False)
            root.removeHandler(handler)
            root.setLevel(old_levels[0])
            run_logger.setLevel(old_levels[1])
