"""Lineage: from a result down to everything it was made from, its check and its repair.

:func:`lineage` follows the sidecars of a file's inputs recursively and
:func:`render_lineage` prints that tree; :func:`check_lineage` verifies
every file and every recorded code hash of it (:func:`check_directory`:
of every result under a directory); :func:`repair` removes what a check
finds damaged and everything made from it, so that Snakemake rebuilds
exactly those files.  ``aimrepro provenance FILE [--check [--repair]]`` is
a thin wrapper around them.  Sidecar paths are resolved
against the directory the workflow ran in, inferred from where the
described file lives now, so a moved copy of the repository still resolves.
Paths are made absolute without following symbolic links: a result taken
from Snakemake's shared cache is a link into the cache, and its sidecar and
inputs are found beside the link, in the working directory that uses it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aimrepro.records.files import PathLike, file_sha256
from aimrepro.records.sidecars import (RESULT_ROOTS, _load_sidecar, cache_entry, repair_command, reuse_of,
                                       sidecar_path)

__all__ = ["LineageCheck", "LineageNode", "Repair", "check_directory", "check_lineage",
           "describe_repair", "lineage", "render_lineage", "repair", "repair_command"]


#: Status of a file its sidecar marks temporary and that is gone: deleted by design once
#: used (a paper-scale dataset), not a problem; ``snakemake PATH`` rebuilds it bit for bit.
DELETED_TEMPORARY = "deleted once used (temporary)"


@dataclass
class LineageNode:
    """One file in a lineage tree.

    Attributes
    ----------
    path : str
        The path as recorded by the consumer (or given by the user, at the root).
    resolved : pathlib.Path
        Where the file was looked up (absolute; symbolic links are kept).
    sidecar : dict or None
        Its sidecar, or ``None`` if it has none (a raw input), it is missing
        or it is malformed.
    status : str
        ``"ok"``; ``"missing"`` (file absent); :data:`DELETED_TEMPORARY` (absent,
        and its sidecar says it is deleted once used); ``"not a regular file"``;
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
    cache_entry : str or None
        The file of Snakemake's shared result cache this file links to
        (:func:`aimrepro.records.sidecars.cache_entry`).
    reused : dict or None
        Where the file was made when that is not this lineage's working
        directory (:func:`aimrepro.records.sidecars.reuse_of`): a result
        computed elsewhere and reused here.  Not a problem in itself: it was
        verified like any other file.
    """

    path: str
    resolved: Path
    sidecar: dict[str, Any] | None
    status: str
    children: list[LineageNode] = field(default_factory=list)
    code: dict[str, str] = field(default_factory=dict)
    code_status: dict[str, str] = field(default_factory=dict)
    cache_entry: str | None = None
    reused: dict[str, Any] | None = None

    def walk(self) -> Iterator[LineageNode]:
        """This node and every node below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


def _start_of(path: Path) -> Path:
    """Where a lineage starts: ``path``, or, given a sidecar itself, the first output it
    describes (it lives in the same directory)."""
    if path.suffix == ".json" and path.is_file():
        record, _ = _load_sidecar(path)
        if record is not None:
            return path.with_name(Path(next(iter(record["outputs"]))).name)
    return path


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
    root = _start_of(Path(path))
    if not root.exists() and not sidecar_path(root).exists():
        raise FileNotFoundError(f"no such file: {path}")
    walker = _LineageWalker(max_depth)
    return walker.node(str(path), _absolute(root), expected_sha=None, ancestors=())


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
    problems, code_files = _problems(root.walk())
    return LineageCheck(root=root, problems=problems, n_files=len({node.resolved for node in root.walk()}),
                        n_code_files=len(code_files))


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
            status = DELETED_TEMPORARY if record is not None and record.get("temporary") else "missing"
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

        node = LineageNode(path=recorded, resolved=resolved, sidecar=record, status=status,
                           cache_entry=cache_entry(resolved))
        if record is None or status == "not a regular file":
            return node
        workdir = _workdir_of(resolved, record, _recorded_name(record, resolved))
        node.reused = reuse_of(resolved, record, workdir=workdir)
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
    actual = _absolute(actual)
    if recorded.is_absolute():
        return Path(record.get("workdir", "/"))
    n_parts = len(recorded.parts)
    if tuple(actual.parts[-n_parts:]) == recorded.parts:
        return Path(*actual.parts[:-n_parts]) if len(actual.parts) > n_parts else Path("/")
    return Path(record.get("workdir", os.getcwd()))


def _resolve(path: Path, workdir: Path) -> Path:
    return _absolute(path if path.is_absolute() else (workdir / path))


def _absolute(path: Path) -> Path:
    """``path`` made absolute and normalised, without following symbolic links."""
    return Path(os.path.abspath(path))


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
        reused = node.reused
        if reused is not None:
            where = f"reused: made on {reused.get('host')} in {reused.get('workdir')}"
            parts.append(where + (f" (commit {str(reused.get('commit'))[:10]})"
                                  if reused.get("commit") not in (None, "unknown") else ""))
        if node.cache_entry is not None:
            parts.append(f"cache entry {node.cache_entry}")
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


# ---------------------------------------------------------------------------
# checking a directory, and repairing what a check finds


#: Statuses of a lineage node that the repair rebuilds: the file is damaged, absent, or
#: not what its consumer used.  (``"no sidecar"`` only for a pipeline result: see
#: :func:`_is_pipeline_result`.)
_REBUILT_STATUSES = ("missing", "modified", "changed since use", "malformed sidecar", "no sidecar")
#: Files under a result directory that are not results: logs, and the hidden temporaries
#: of an interrupted write (``records.files.atomic_path``).
_NOT_RESULTS = (".json", ".log")


@dataclass
class _Graph:
    """The union of several lineages: each file once, with its consumers."""

    nodes: dict[Path, LineageNode] = field(default_factory=dict)
    consumers: dict[Path, set[Path]] = field(default_factory=dict)
    roots: list[LineageNode] = field(default_factory=list)

    def add(self, root: LineageNode) -> None:
        self.roots.append(root)
        for node in root.walk():
            # a file met twice keeps its worst status (e.g. changed since use by one consumer)
            known = self.nodes.get(node.resolved)
            if known is None or (known.status == "ok" and node.status != "ok"):
                self.nodes[node.resolved] = node
            for child in node.children:
                self.consumers.setdefault(child.resolved, set()).add(node.resolved)

    def downstream(self, paths) -> set[Path]:
        """``paths`` and every file made from them, transitively."""
        seen, stack = set(), list(paths)
        while stack:
            path = stack.pop()
            if path not in seen:
                seen.add(path)
                stack.extend(self.consumers.get(path, ()))
        return seen


def _result_files(directory: Path) -> list[Path]:
    """Every result under ``directory``: the files that are not sidecars, logs or hidden,
    and the outputs that the sidecars there describe (present or not)."""
    found: set[Path] = set()
    for path in sorted(directory.rglob("*")):
        if any(part.startswith(".") for part in path.relative_to(directory).parts):
            continue
        if path.suffix == ".json" and path.is_file():
            record, _ = _load_sidecar(path)
            if record is not None:
                found.update(path.with_name(Path(name).name) for name in record["outputs"])
        elif path.is_file() and path.suffix not in _NOT_RESULTS:
            found.add(path)
    return sorted(found)


def _graph(targets, max_depth: int, *, skip_absent: bool = False) -> _Graph:
    graph, walker = _Graph(), _LineageWalker(max_depth)
    for target in map(Path, targets):
        if not target.exists() and not sidecar_path(target).exists() and skip_absent:
            continue  # nothing there to repair: what is absent, snakemake builds
        roots = _result_files(target) if target.is_dir() else [target]
        for root in map(_start_of, roots):
            if not root.exists() and not sidecar_path(root).exists():
                raise FileNotFoundError(f"no such file: {root}")
            graph.add(walker.node(str(root), _absolute(root), expected_sha=None, ancestors=()))
    return graph


def _problems(nodes) -> tuple[list[str], set[str]]:
    """``"<path>: <what differs>"`` for each node's status and code, each once; and the code files seen."""
    problems: list[str] = []
    code_files: set[str] = set()
    reported: set[tuple[Path, str]] = set()
    for node in nodes:
        findings = [] if node.status in ("ok", DELETED_TEMPORARY) else [node.status]
        findings += [f"code {code}: {state}" for code, state in node.code_status.items()
                     if state != "ok"]
        code_files.update(node.code_status)
        for finding in findings:
            if (node.resolved, finding) not in reported:
                reported.add((node.resolved, finding))
                problems.append(f"{node.path}: {finding}")
    return problems, code_files


def check_directory(directory: PathLike, *, max_depth: int = 32) -> LineageCheck:
    """:func:`check_lineage` of every result under ``directory`` (each file checked once).

    A result whose sidecar was deleted is found there (``no sidecar``), as is a
    result that a sidecar describes but that is gone (``missing``).
    """
    graph = _graph([directory], max_depth)
    problems, code_files = _problems(node for root in graph.roots for node in root.walk())
    root = LineageNode(path=str(directory), resolved=_absolute(Path(directory)), sidecar=None,
                       status="ok", children=graph.roots)
    return LineageCheck(root=root, problems=problems, n_files=len(graph.nodes),
                        n_code_files=len(code_files))


@dataclass
class Repair:
    """Outcome of :func:`repair`.

    Attributes
    ----------
    targets : list of str
        What was repaired (files, or directories of results).
    rebuilt : list of str
        ``"<path>: <why>"`` for each file found damaged, absent or changed
        since use: the reasons for the removals.
    removed : list of str
        The files removed, sidecars included: the damaged files and
        everything made from them on the way to the targets.
    left : list of str
        Problems a rebuild does not fix, left as they are: an input that is
        not a regular file, a file without a sidecar outside the result
        directories (a raw input: never deleted), a cycle.
    code_changed : list of str
        Code files that differ from the recorded hash: not repaired here,
        since Snakemake reruns the steps that ran them by itself (the code
        is an input of their rules).
    """

    targets: list[str]
    rebuilt: list[str]
    removed: list[str]
    left: list[str]
    code_changed: list[str]

    @property
    def complete(self) -> bool:
        """True if every problem found is one that a rebuild fixes."""
        return not self.left


def _is_pipeline_result(path: Path) -> bool:
    """A file the pipeline makes: under a ``results`` or ``figures`` directory."""
    return any(part in RESULT_ROOTS for part in path.parts[:-1])


def repair(targets, *, max_depth: int = 32) -> Repair:
    """Remove what :func:`check_lineage` finds wrong in the targets' lineages, and what depends on it.

    Every file of the lineages (of each target file, or of every result under
    a target directory; a target that does not exist holds nothing to
    repair) whose status is one of :data:`_REBUILT_STATUSES` is rebuilt: the file is removed if present (with its sidecar and the other
    outputs that sidecar describes: a figure's PDF and PNG) and so is every
    file made from it on the way to the targets.  Snakemake then finds those
    files missing and reruns exactly their rules; a file that is merely
    absent (a deleted intermediate) is rebuilt too, because its consumers
    are removed: without that, Snakemake would leave it absent as long as
    what it feeds is up to date.

    Returns
    -------
    Repair
        What was found and removed; ``Repair.complete`` is False if a
        problem was left that a rebuild cannot fix.
    """
    graph = _graph(targets, max_depth, skip_absent=True)
    bad: set[Path] = set()
    rebuilt: list[str] = []
    left: list[str] = []
    code_changed: set[str] = set()
    for node in graph.nodes.values():
        status = node.status.removesuffix(" (depth limit)")
        code_changed.update(f"code {code}: {state}" for code, state in node.code_status.items()
                            if state != "ok")
        if status in ("ok", DELETED_TEMPORARY) or (status == "no sidecar"
                                                   and not _is_pipeline_result(node.resolved)):
            continue  # a raw input has no sidecar; a temporary file is deleted by design
        if status.startswith(_REBUILT_STATUSES) and (status in ("missing", "changed since use")
                                                     or _is_pipeline_result(node.resolved)):
            bad.add(node.resolved)
            rebuilt.append(f"{node.path}: {status}")
        else:
            left.append(f"{node.path}: {status}")
    removed: list[str] = []
    for path in sorted(graph.downstream(bad)):
        if not _is_pipeline_result(path):
            continue  # a raw input is never deleted: what was made from it is rebuilt
        for doomed in _with_sidecar(path, graph.nodes.get(path)):
            if doomed.is_file() or doomed.is_symlink():
                doomed.unlink()
                removed.append(_shown(doomed))
    return Repair(targets=[str(t) for t in targets], rebuilt=sorted(rebuilt),
                  removed=removed, left=sorted(set(left)), code_changed=sorted(code_changed))


def _shown(path: Path) -> str:
    """A path relative to the working directory when it lies below it (as the sidecars write them)."""
    try:
        return str(path.relative_to(_absolute(Path.cwd())))
    except ValueError:
        return str(path)


def _with_sidecar(path: Path, node: LineageNode | None) -> list[Path]:
    """The file, the other outputs its sidecar describes, and the sidecar (outputs first)."""
    side = sidecar_path(path) if path.suffix != ".json" else None
    record = node.sidecar if node is not None else None
    if record is None and side is not None and side.exists():
        record = _load_sidecar(side)[0]
        if record is None:  # a malformed sidecar goes too: the rebuild writes a new one
            return [path, side]
    if record is None:
        return [path]
    outputs = [path.with_name(Path(name).name) for name in record["outputs"]]
    return [*dict.fromkeys([path, *outputs]), sidecar_path(path)]


def describe_repair(outcome: Repair) -> str:
    """What :func:`repair` found and removed, and the command to run next, as printed lines."""
    lines = [f"rebuild {line}" for line in outcome.rebuilt]
    lines += [f"removed {path}" for path in outcome.removed]
    lines += [f"left as is: {line}" for line in outcome.left]
    lines += [f"left to snakemake (it reruns the steps that ran it): {line}"
              for line in outcome.code_changed]
    if not outcome.rebuilt:
        lines.append(f"{' '.join(outcome.targets)}: nothing to remove")
    else:
        lines.append(f"removed {len(outcome.removed)} files; now run: snakemake "
                     "(with your usual options: it rebuilds exactly the removed files and what "
                     "they feed)")
    return "\n".join(lines)
