"""What the report's opening text says about how the report was built.

``snakemake --report`` renders ``workflow/report/workflow.rst`` as the report's
opening text.  :func:`build_note` writes its sentence on provenance: when the
report was built, at which commit the checkout stood, and from which commits
the results it shows were made, read from their sidecars (docs/design.md,
"Provenance sidecar").  Both commits are given because a report may show
results made before the last commit.
"""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from aimrepro.records.files import file_sha256
from aimrepro.records.sidecars import git_state, read_sidecar, utc_now

__all__ = ["build_note", "describe_commit"]

#: Hex digits of a commit shown in the report (as ``aimrepro provenance`` does).
SHORT_COMMIT = 10


def describe_commit(commit: str | None, dirty: bool | None) -> str:
    """A commit as reST: ``abc1234567``, plus a remark if the tree had uncommitted changes.

    >>> describe_commit("0123456789abcdef", True)
    '``0123456789`` (with uncommitted changes)'
    >>> describe_commit("unknown", None)
    'an unknown commit'
    """
    if not commit or commit == "unknown":
        return "an unknown commit"
    text = f"``{commit[:SHORT_COMMIT]}``"
    return text + " (with uncommitted changes)" if dirty else text


def build_note(shown: Iterable[os.PathLike | str], *, repository: os.PathLike | str,
               now: dt.datetime | None = None) -> str:
    """One reST paragraph on when and from which commits the report and its results were made.

    Parameters
    ----------
    shown : iterable of paths
        The files the report shows (figures, the claims table); each one's
        sidecar is the same stem with ``.json``.
    repository : path
        The checkout the report is built in (its git state is the report's).
    now : datetime, optional
        Timezone-aware build time; default the current UTC time.

    Returns
    -------
    str
        E.g. "Built on 2026-12-01 16:40 UTC at commit ``254148e1a2``.  The 3
        results shown were made at that commit, the last one on 2026-12-01
        16:17 UTC."  Results without a sidecar, or that no longer match it,
        are counted apart.

    Raises
    ------
    ValueError
        If ``now`` is not timezone-aware.
    """
    now = utc_now() if now is None else now
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (e.g. aimrepro.records.sidecars.utc_now())")
    checkout = git_state(repository)
    sentences = [f"Built on {_format_time(now)} {_at(checkout['commit'], checkout['dirty'])}."]
    commits: Counter[tuple[str, bool | None]] = Counter()
    ended: list[dt.datetime] = []
    no_sidecar = modified = 0
    for path in map(Path, shown):
        try:
            record = read_sidecar(path)
        except (FileNotFoundError, ValueError):
            no_sidecar += 1
            continue
        git = record.get("git") or {}
        commits[(str(git.get("commit", "unknown")), git.get("dirty"))] += 1
        # Sidecars name their outputs relative to the working directory.
        recorded = record["outputs"].get(
            os.path.relpath(path, repository) if path.is_absolute() else str(path))
        if recorded is not None and recorded != file_sha256(path):
            modified += 1
        moment = _parse_time(record.get("ended"))
        if moment is not None:
            ended.append(moment)
    n_recorded = sum(commits.values())
    if n_recorded:
        sentences.append(_results_sentence(commits, checkout, n_recorded, max(ended, default=None)))
    if no_sidecar:
        sentences.append(f"{_count(no_sidecar, 'shown file')} {_has(no_sidecar)} no readable "
                         "sidecar.")
    if modified:
        sentences.append(f"{_count(modified, 'shown file')} no longer {_match(modified)} "
                         "its sidecar: run ``aimrepro provenance --check`` on it.")
    return "  ".join(sentences)


def _results_sentence(commits: Counter, checkout: dict, n_recorded: int,
                      last: dt.datetime | None) -> str:
    results = _count(n_recorded, "result")
    if len(commits) == 1:
        (commit, dirty), = commits
        where = ("at that commit" if (commit, dirty) == (checkout["commit"], checkout["dirty"])
                 and commit != "unknown" else _at(commit, dirty))
        text = f"The {results} shown {'were' if n_recorded > 1 else 'was'} made {where}"
    else:
        parts = ", ".join(f"{describe_commit(commit, dirty)} ({_count(count, 'result')})"
                          for (commit, dirty), count in sorted(
                              commits.items(), key=lambda item: (-item[1], item[0][0])))
        text = f"The {results} shown were made at {len(commits)} commits: {parts}"
    if last is not None:
        text += f", the last one on {_format_time(last)}" if n_recorded > 1 else \
            f", on {_format_time(last)}"
    return text + "."


def _at(commit: str | None, dirty: bool | None) -> str:
    described = describe_commit(commit, dirty)
    return f"at {described}" if described.startswith("an ") else f"at commit {described}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _has(n: int) -> str:
    return "has" if n == 1 else "have"


def _match(n: int) -> str:
    return "matches" if n == 1 else "match"


def _format_time(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _parse_time(text) -> dt.datetime | None:
    """A sidecar's ISO 8601 time (``...Z``), or None if absent or unreadable."""
    if not isinstance(text, str):
        return None
    try:
        # Python 3.10's fromisoformat does not read the Z suffix.
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
