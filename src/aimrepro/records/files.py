"""Files that are never half-written: atomic writes, stale temporaries, hashes.

Every result of the pipeline is written to a temporary file in its own
directory and moved onto its final name only once complete
(:func:`atomic_path`, :func:`atomic_write`), so a reader sees the old file
or the complete new one.  A process killed with SIGKILL leaves its
temporary behind; the next attempt removes it
(:func:`remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PathLike = str | os.PathLike


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


def file_sha256(path: PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
