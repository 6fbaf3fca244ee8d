"""The code a workflow script runs: its import closure, as rule inputs.

Snakemake reruns a job when its script changes, but it does not follow the
script's imports.  Each rule therefore declares as ``code`` inputs every
source file its script runs (docs/design.md, "Reruns"), and this module
derives that list from the imports themselves, so that it cannot fall out
of date:

* the script itself, and the helper modules beside it (``_job.py``, ...)
  that it imports **at module level** (statements executed on import:
  top-level, and inside top-level ``if``/``try``/``with``/class bodies, but
  not inside functions);
* every ``aimrepro`` module those import, transitively, with the
  ``__init__.py`` of each package on the way (Python runs them on import).
  Inside the package *every* import counts, including those inside
  functions: a rule may call any function of a module it imports, so a
  lazy import in the package must not hide a dependency.

Imports inside the functions of a workflow helper are not followed: that is
how a helper keeps a dependency that only some scripts need (the claims
writer, the plotting code) out of the other scripts' closures.  The job
glue checks at run time that every ``aimrepro`` module a job actually
loaded was declared (``_job.py``), so a lazy import that a script does not
also cover at module level fails loudly instead of going stale.

Third-party and standard-library imports are not code inputs: they are
recorded as package versions in each sidecar.

Nothing here imports the modules it reads (only :mod:`ast`), so it is cheap
and safe to run while Snakemake parses the workflow.  Parsing the ~120
modules still took a third of a second at every Snakemake start, so the
workflow keeps each file's import list on disk, keyed by the file's content
(:class:`ImportListCache`): an edited file is parsed again, an unchanged one
is only read and hashed.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CodeLayout", "ImportClosures", "ImportListCache", "import_closure",
           "imported_modules"]


@dataclass(frozen=True)
class CodeLayout:
    """Where the code lives.

    Attributes
    ----------
    package_root : Path
        The directory holding the package directory (``src``).
    package : str
        The package whose modules are followed (``aimrepro``).
    helper_dir : Path
        The directory of the workflow scripts and their helpers
        (``workflow/scripts``); a module name found there is a helper.
    """

    package_root: Path
    package: str
    helper_dir: Path

    def package_file(self, dotted: str) -> Path | None:
        """The source file of package module ``dotted``, or None if there is none."""
        parts = dotted.split(".")
        if parts[0] != self.package:
            return None
        base = self.package_root.joinpath(*parts)
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
        return None

    def helper_file(self, name: str) -> Path | None:
        if "." in name:
            return None
        candidate = self.helper_dir / f"{name}.py"
        return candidate if candidate.is_file() else None

    def dotted_name(self, path: Path) -> str | None:
        """Module name of a package file (``aimrepro.paper1.spectra``), else None."""
        try:
            relative = path.resolve().relative_to(self.package_root.resolve())
        except ValueError:
            return None
        parts = list(relative.with_suffix("").parts)
        if not parts or parts[0] != self.package:
            return None
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)


def imported_modules(source: str, *, module_level_only: bool,
                     current: str | None = None, is_package: bool = False) -> list[str]:
    """Absolute names of the modules a source file imports.

    Parameters
    ----------
    source : str
        Python source.
    module_level_only : bool
        Skip imports inside function bodies (lambdas have none).
    current : str, optional
        Dotted name of the module, to resolve relative imports; relative
        imports of a module without one are ignored.
    is_package : bool
        ``current`` is a package (an ``__init__.py``): ``from . import x``
        then means ``current.x``.

    Returns
    -------
    list of str
        For ``from a.b import c`` both ``a.b`` and ``a.b.c`` are listed (``c``
        may be a submodule or an attribute: the caller keeps what exists).
    """
    tree = ast.parse(source)
    names: list[str] = []
    for node in _import_nodes(tree, module_level_only):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
            continue
        base = _absolute_base(node, current, is_package)
        if base is None:
            continue
        if base:
            names.append(base)
        names.extend(f"{base}.{alias.name}" if base else alias.name
                     for alias in node.names if alias.name != "*")
    return names


def _import_nodes(tree: ast.AST, module_level_only: bool):
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if module_level_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _absolute_base(node: ast.ImportFrom, current: str | None, is_package: bool) -> str | None:
    if node.level == 0:
        return node.module or ""
    if current is None:
        return None
    package_parts = current.split(".") if is_package else current.split(".")[:-1]
    if node.level - 1 > len(package_parts):
        return None
    anchor = package_parts[: len(package_parts) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def import_closure(script: Path, layout: CodeLayout) -> list[Path]:
    """The script and every source file it runs on import, transitively.

    Parameters
    ----------
    script : Path
        A workflow script.
    layout : CodeLayout
        Where the package and the helpers live.

    Returns
    -------
    list of Path
        Sorted, without duplicates, as given (absolute if the layout is).
    """
    return ImportClosures(layout)(script)


class ImportClosures:
    """:func:`import_closure` for many scripts, each module's imports resolved once.

    The rules of one workflow share most of their modules; resolving a
    module's imports stats the candidate files, so a workflow parse (49
    scripts, ~1 100 module visits) took 0.5 s without this memo and a tenth
    of it with.  Made once per parse of the workflow, while no file changes:
    a new instance sees edits.  With ``cache`` (an :class:`ImportListCache`)
    the import lists of unchanged files come from disk instead of the parser.
    """

    def __init__(self, layout: CodeLayout, cache: ImportListCache | None = None) -> None:
        self.layout = layout
        self.cache = cache
        self._direct: dict[Path, list[Path]] = {}

    def __call__(self, script: Path) -> list[Path]:
        seen: set[Path] = set()
        pending = [script]
        while pending:
            path = pending.pop()
            if path in seen:
                continue
            seen.add(path)
            if path not in self._direct:
                self._direct[path] = list(_direct_dependencies(path, self.layout, self.cache))
            pending.extend(self._direct[path])
        if self.cache is not None:
            self.cache.save()
        return sorted(seen)


class ImportListCache:
    """Import lists of source files on disk, keyed by each file's content (a JSON file).

    The key is the SHA-256 of the file's bytes with the arguments of
    :func:`imported_modules`, and the whole cache is dropped when this
    module's own source changes (the parser may have changed), so a cached
    list is always what parsing the file would give.  Unreadable or foreign
    contents count as an empty cache; a cache that cannot be written (a
    read-only checkout) only costs the parsing.  Writes go to a temporary
    file renamed over the cache, so a concurrent reader sees the old or the
    new file, never half of one.

    Parameters
    ----------
    path : Path
        The cache file (the workflow uses ``.snakemake/aimrepro-import-lists.json``
        beside the Snakefile).
    """

    VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._entries: dict[str, list[str]] = {}
        self._dirty = False
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(stored, dict) and stored.get("version") == self.VERSION \
                and isinstance(stored.get("entries"), dict):
            self._entries = stored["entries"]

    def imports(self, path: Path, *, in_package: bool, dotted: str | None,
                is_package: bool) -> tuple[str, ...]:
        """:func:`imported_modules` of the file at ``path``, from the cache when it holds them."""
        source = path.read_bytes()
        key = (f"{hashlib.sha256(source).hexdigest()} {int(in_package)} {dotted or ''} "
               f"{int(is_package)}")
        names = self._entries.get(key)
        if names is None:
            names = imported_modules(source.decode("utf-8"), module_level_only=not in_package,
                                     current=dotted, is_package=is_package)
            self._entries[key] = names
            self._dirty = True
        return tuple(names)

    def save(self) -> None:
        """Write the cache if a list was added since it was read or last written."""
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name,
                                                 suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"version": self.VERSION, "entries": self._entries}, out)
            os.chmod(temporary, 0o644)   # mkstemp's 0600 would hide it from other users
            os.replace(temporary, self.path)
        except OSError:
            Path(temporary).unlink(missing_ok=True)
            return
        self._dirty = False


def _direct_dependencies(path: Path, layout: CodeLayout,
                         cache: ImportListCache | None = None) -> Iterable[Path]:
    dotted = layout.dotted_name(path)
    in_package = dotted is not None
    is_package = path.name == "__init__.py"
    if cache is not None:
        names = cache.imports(path, in_package=in_package, dotted=dotted, is_package=is_package)
    else:
        names = _cached_imports(path, path.stat().st_mtime_ns, in_package, dotted, is_package)
    found: list[Path] = []
    for name in names:
        helper = layout.helper_file(name) if not in_package else None
        if helper is not None:
            found.append(helper)
            continue
        parts = name.split(".")
        # Importing a.b.c runs a/__init__.py, a/b/__init__.py, then c.
        for end in range(1, len(parts) + 1):
            module = layout.package_file(".".join(parts[:end]))
            if module is not None:
                found.append(module)
    return found


@functools.lru_cache(maxsize=None)
def _cached_imports(path: Path, mtime_ns: int, in_package: bool, dotted: str | None,
                    is_package: bool) -> tuple[str, ...]:
    # Keyed on the modification time too, so an edited file is parsed again.
    source = path.read_text(encoding="utf-8")
    return tuple(imported_modules(source, module_level_only=not in_package,
                                  current=dotted, is_package=is_package))
