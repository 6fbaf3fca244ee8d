"""Lineage: from a result down to everything it was made from, and its check.

:func:`lineage` follows the sidecars of a file's inputs recursively and
:func:`render_lineage` prints that tree; :func:`check_lineage` verifies
every file and every recorded code hash of it.  ``aimrepro provenance FILE
[--check]`` is a thin wrapper around them.  Sidecar paths are resolved
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
from aimrepro.records.sidecars import _load_sidecar, cache_entry, reuse_of, sidecar_path


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
