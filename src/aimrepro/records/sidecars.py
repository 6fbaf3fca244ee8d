"""Provenance sidecars: how each result was made, and the check before it is used.

Every result and figure of the pipeline has a *sidecar*: a JSON file in the
same directory with the same stem (``alpha_log_0.03_10_n24.csv`` ->
``alpha_log_0.03_10_n24.json``) that records how the file was made
(docs/design.md, "Provenance sidecar").  Before a job uses a result,
:func:`verify_input` checks the result against its sidecar.

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
``cpu_seconds``, ``peak_rss_bytes``
    What the process that wrote the sidecar had used when it wrote it
    (:func:`process_usage`): user + system CPU seconds since it started,
    its finished child processes included, and its peak resident memory.
    In a pipeline job that process is the job, so these are the job's
    cost, interpreter start-up included: the measurements the cost model
    (``workflow/lib/aimrepro_workflow/costs.py``) is calibrated on.
    ``null`` where the platform has no ``resource`` module.
``diagnostics``
    Solver diagnostics (``converged``, ``iterations``, ``residual``, ...).
``temporary``
    True if the outputs are deleted by design once their consumers are done
    (Snakemake ``temp()``: the datasets at the paper scale); the sidecar
    stays, and a lineage check counts the absent file as deleted, not as
    missing.  Absent (False) in sidecars written before this field.
``reused_inputs``
    ``{path: {"cache_entry", "host", "workdir", "commit", "ended"}}`` of the
    data inputs that were made in another working directory and reused here,
    typically taken from Snakemake's shared result cache (:func:`reuse_of`):
    where each was computed, and the cache file it links to (``null`` when
    it is not a link into the cache).  Empty when every input was made here.
    Absent from sidecars written before it existed, which reads as empty.

A result made elsewhere and reused (Snakemake's ``--cache``, docs/design.md
"Shared result cache") is checked harder before use (:func:`verify_input`):
besides its bytes against its sidecar, its sidecar must describe this very
path, whose name carries every parameter, and every code file it records must
have the same sha256 here, so a reused result was made by the code this
working directory runs.

Paths inside a sidecar are stored as given by the caller, normally relative
to the workflow's working directory.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata as _metadata
from pathlib import Path
from typing import Any

import numpy as np

import aimrepro
from aimrepro.records.files import PathLike, atomic_write, file_sha256

SIDECAR_SCHEMA = "aimrepro.sidecar/1"

#: Packages whose versions every sidecar records, where importable.
_VERSIONED_PACKAGES = ("numpy", "scipy", "matplotlib", "snakemake")

#: The name of a file in Snakemake's between-workflow cache: the job's provenance
#: hash (64 hex digits), then the output's name and suffix (``<hash>_table.csv``).
_CACHE_ENTRY_NAME = re.compile(r"[0-9a-f]{64}(?:_[^/]*)?")


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


def process_usage() -> dict[str, float | int | None]:
    """CPU seconds and peak resident memory of this process so far.

    ``cpu_seconds``: user + system time of this process and of its finished
    (waited-for) children, from ``resource.getrusage``; CPU time, unlike wall
    time, does not grow when other work shares the machine.
    ``peak_rss_bytes``: the high-water mark of this process image's resident
    memory, ``VmHWM`` of ``/proc/self/status`` on Linux.  Not ``ru_maxrss``
    there: Linux carries ``ru_maxrss`` across ``exec``, so a job that
    Snakemake forks and execs would report at least Snakemake's own resident
    size.  Elsewhere ``ru_maxrss`` (kilobytes, bytes on macOS).  Both ``None``
    without the ``resource`` module (Windows).
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX systems
        return {"cpu_seconds": None, "peak_rss_bytes": None}
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    peak = _vm_high_water_mark()
    if peak is None:
        peak = int(own.ru_maxrss) * (1 if sys.platform == "darwin" else 1024)
    return {"cpu_seconds": round(cpu, 3), "peak_rss_bytes": peak}


def _vm_high_water_mark() -> int | None:
    """``VmHWM`` of /proc/self/status in bytes, or None where there is none."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


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
    temporary: bool = False,
    reused_inputs: Mapping[str, Mapping[str, Any]] | None = None,
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
    temporary : bool
        The outputs will be deleted once used (recorded as ``temporary``).
    reused_inputs : mapping, optional
        ``{path: reuse record}`` (:func:`reuse_of`) of the inputs that were made
        in another working directory; recorded as ``reused_inputs``.

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
        "temporary": bool(temporary),
        "reused_inputs": _jsonable(dict(reused_inputs or {})),
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
        **process_usage(),
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


#: The directories the pipeline writes its results to, each with one subdirectory per scale
#: (``results/quick``, ``figures/paper``); a file there is a result and must have a sidecar.
RESULT_ROOTS = ("results", "figures")


def repair_targets(path: PathLike) -> list[str]:
    """What ``aimrepro provenance --check --repair`` must be given to repair ``path`` whatever uses it.

    For a result of the pipeline (``results/SCALE/...``, a relative path, as the
    jobs see their inputs) the result directories of its scale
    (``results/SCALE figures/SCALE``): the repair then finds every file made
    from ``path``, however far downstream (a directory that does not exist
    holds nothing to repair).  Elsewhere, the file's own directory.
    """
    parts = Path(path).parts
    if len(parts) >= 3 and parts[0] in RESULT_ROOTS:
        return [f"{root}/{parts[1]}" for root in RESULT_ROOTS]
    return [str(Path(path).parent)]


def repair_command(targets) -> str:
    """The one command that repairs ``targets``' lineages, then the rebuild (printed by every refusal)."""
    return (f"aimrepro provenance --check --repair {' '.join(str(t) for t in targets)} "
            f"&& snakemake")


def verify_input(path: PathLike, *, workdir: PathLike | None = None) -> str:
    """Check a pipeline result against its sidecar before using it; return its sha256.

    A result whose bytes differ from the sha256 its own sidecar recorded was
    changed or damaged after it was made (a truncated table, a hand edit, a
    half-copied file): a job must not draw from it.  Nor from a result (a
    file under one of :data:`RESULT_ROOTS`) whose sidecar is gone: nothing
    says how it was made.  A file without a sidecar elsewhere (a raw input)
    is only hashed.  A result made in another working directory and reused
    here (:func:`reuse_of`, e.g. from Snakemake's shared cache) must moreover
    be described by its sidecar under this very path and have been made by
    the code files this working directory has, byte for byte (their sha256
    as the sidecar recorded them).

    The refusal's remedy is one command that works whatever is downstream
    (:func:`repair_command` on :func:`repair_targets`): the repair removes
    the damaged file and every file made from it, which Snakemake then
    rebuilds; deleting the damaged file alone would not do, since Snakemake
    leaves an intermediate absent while what it feeds is up to date.  A
    damaged input that links into the shared cache names its cache entries
    too, to delete first (else the next run would take them again).

    Parameters
    ----------
    path : path
        The input file, relative to ``workdir`` as the workflow names it.
    workdir : path, optional
        The working directory of the job using it; default the current one.

    Returns
    -------
    str
        The file's sha256 (hashed once; the caller records it).

    Raises
    ------
    DamagedInputError
        The file differs from its sidecar, the sidecar is unreadable or
        does not describe it, or a reused result was made for another path
        or by other code.  One line naming the file and the remedy.
    """
    path = Path(path)
    workdir = Path(os.getcwd() if workdir is None else workdir)
    digest = file_sha256(path if path.is_absolute() else workdir / path)
    side = sidecar_path(path if path.is_absolute() else workdir / path)
    shown = sidecar_path(path)  # as the workflow names it, in messages
    remedy = _remedy(path, workdir)
    if not side.exists():
        if path.parts and path.parts[0] in RESULT_ROOTS:
            raise DamagedInputError(f"input {path}: its sidecar {shown} is missing (nothing says how "
                                    f"it was made); {remedy}")
        return digest
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
    reuse = reuse_of(path, record, workdir=workdir)
    if reuse is not None:
        problem = _reuse_mismatch(path, record, workdir)
        if problem is not None:
            raise DamagedInputError(
                f"input {path} was reused from {reuse['host']}:{reuse['workdir']} but {problem}; "
                f"{remedy}")
    return digest


def cache_entry(path: PathLike) -> str | None:
    """The file of Snakemake's shared result cache that ``path`` links to, or None.

    Snakemake's local output cache (``snakemake --cache``) moves a cached
    job's outputs into ``$SNAKEMAKE_OUTPUT_CACHE`` under the job's provenance
    hash and leaves a symbolic link in their place, in the run that stored
    them as in every run that reuses them.  A cache behind a storage plugin
    copies the file instead, which leaves no link to report.
    """
    path = Path(path)
    if not path.is_symlink():
        return None
    target = Path(os.path.normpath(path.parent / os.readlink(path)))
    return str(target) if _CACHE_ENTRY_NAME.match(target.name) else None


def reuse_of(path: PathLike, record: Mapping[str, Any], *,
             workdir: PathLike | None = None) -> dict[str, Any] | None:
    """Where a result was made, if not in ``workdir``: the record a consumer keeps of a reuse.

    A result whose sidecar names another working directory than ``workdir``
    (default the current one) was computed elsewhere and reused here: taken
    from Snakemake's shared cache, or copied.  A result computed here and
    then stored into the cache is not a reuse.

    Returns
    -------
    dict or None
        ``{"cache_entry", "host", "workdir", "commit", "ended"}`` (see the
        module docstring, ``reused_inputs``), or None if it was made here.
    """
    here = os.path.realpath(os.getcwd() if workdir is None else workdir)
    made_in = record.get("workdir")
    if not isinstance(made_in, str) or os.path.realpath(made_in) == here:
        return None
    full = Path(path) if Path(path).is_absolute() else Path(here) / path
    git = record.get("git") if isinstance(record.get("git"), Mapping) else {}
    return {"cache_entry": cache_entry(full), "host": record.get("host"), "workdir": made_in,
            "commit": git.get("commit"), "ended": record.get("ended")}


def reused_input(path: PathLike, *, workdir: PathLike | None = None) -> dict[str, Any] | None:
    """:func:`reuse_of` an input file from its sidecar (None without a readable sidecar)."""
    workdir = Path(os.getcwd() if workdir is None else workdir)
    full = Path(path) if Path(path).is_absolute() else workdir / path
    record, _ = _load_sidecar(sidecar_path(full)) if sidecar_path(full).exists() else (None, None)
    return None if record is None else reuse_of(path, record, workdir=workdir)


def _reuse_mismatch(path: Path, record: Mapping[str, Any], workdir: Path) -> str | None:
    """Why a reused result does not belong here (another path, other code), or None."""
    if not path.is_absolute():
        described = [name for name in record["outputs"] if Path(name).name == path.name]
        if not any(Path(name) == path or Path(name).is_absolute() for name in described):
            return f"its sidecar describes {described[0]}, not {path}"
    differing = []
    for code, sha in record["code"].items():
        here = Path(code) if Path(code).is_absolute() else workdir / code
        if not here.is_file():
            differing.append(f"{code} (absent here)")
        elif _code_sha256(here) != sha:
            differing.append(f"{code} (sha256 {sha[:12]} there, {_code_sha256(here)[:12]} here)")
    if differing:
        more = f" and {len(differing) - 1} more" if len(differing) > 1 else ""
        return f"it was made by other code: {differing[0]}{more}"
    return None


#: sha256 of code files by (path, size, mtime): a job checking many reused inputs
#: hashes each module once.
_CODE_HASHES: dict[tuple[str, int, int], str] = {}


def _code_sha256(path: Path) -> str:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _CODE_HASHES:
        _CODE_HASHES[key] = file_sha256(path)
    return _CODE_HASHES[key]


def _remedy(path: Path, workdir: Path) -> str:
    """What to do about a bad input: the repair command, after its shared-cache entries if it links to one."""
    repair = repair_command(repair_targets(path))
    entry = cache_entry(path if path.is_absolute() else workdir / path)
    if entry is None:
        return f"to rebuild it and what was made from it, run: {repair}"
    stem = Path(entry).name[:64]
    return (f"it links to the shared cache entry {entry}: delete the cache entries "
            f"{Path(entry).parent}/{stem}_*, then run: {repair}")


def flattened(value: Any, prefix: str = "") -> dict[str, Any]:
    """A sidecar's nested mapping (``params``, ``diagnostics``) as ``{dotted key: value}``.

    >>> flattened({"wildcards": {"seed": "3"}, "lr": 0.1})
    {'wildcards.seed': '3', 'lr': 0.1}
    """
    if isinstance(value, Mapping):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(flattened(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


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
    if not isinstance(record.get("reused_inputs", {}), dict):
        return None, "'reused_inputs' is not a mapping"
    return record, None
