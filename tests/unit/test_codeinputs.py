"""The code inputs of each rule are its script's import closure (aimrepro_workflow.codeinputs)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

from aimrepro_workflow.codeinputs import (CodeLayout, ImportClosures, ImportListCache, import_closure,
                                          imported_modules)

LAYOUT = CodeLayout(package_root=REPO / "src", package="aimrepro",
                    helper_dir=REPO / "workflow" / "scripts")


def write(root: Path, relative: str, source: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture
def toy(tmp_path):
    """A package ``pkg`` and a scripts directory, with every kind of import."""
    write(tmp_path, "src/pkg/__init__.py", "")
    write(tmp_path, "src/pkg/core.py", "import numpy\nfrom . import util\n")
    write(tmp_path, "src/pkg/util.py", "def f():\n    from .lazy import g\n")
    write(tmp_path, "src/pkg/lazy.py", "")
    write(tmp_path, "src/pkg/sub/__init__.py", "from ..core import x\n")
    write(tmp_path, "src/pkg/sub/deep.py", "from .. import util\n")
    write(tmp_path, "src/pkg/unused.py", "")
    write(tmp_path, "scripts/_helper.py",
          "import pkg.sub.deep\n\ndef later():\n    import pkg.unused\n")
    write(tmp_path, "scripts/job.py", """\
        import math
        from _helper import later
        from pkg import core
        if True:
            from pkg.sub import deep

        def main():
            import pkg.unused
        """)
    return CodeLayout(package_root=tmp_path / "src", package="pkg", helper_dir=tmp_path / "scripts")


def relative_names(paths, root):
    return sorted(str(p.relative_to(root)) for p in paths)


def test_closure_follows_module_level_script_imports_and_every_package_import(toy):
    root = toy.package_root.parent
    closure = import_closure(toy.helper_dir / "job.py", toy)
    assert relative_names(closure, root) == [
        "scripts/_helper.py",
        "scripts/job.py",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        # imported inside a function of the package: a rule may call it
        "src/pkg/lazy.py",
        "src/pkg/sub/__init__.py",
        "src/pkg/sub/deep.py",
        "src/pkg/util.py",
    ]
    # pkg.unused is imported only inside functions of the script and the helper


def test_relative_imports_resolve_against_the_importing_module():
    names = imported_modules("from . import a\nfrom ..b import c\n", module_level_only=False,
                             current="pkg.sub.mod")
    assert sorted(names) == ["pkg.b", "pkg.b.c", "pkg.sub", "pkg.sub.a"]
    in_package_init = imported_modules("from . import a\n", module_level_only=False,
                                       current="pkg.sub", is_package=True)
    assert in_package_init == ["pkg.sub", "pkg.sub.a"]


def test_closure_sees_an_edited_file(toy):
    script = toy.helper_dir / "job.py"
    before = import_closure(script, toy)
    (toy.package_root / "pkg" / "lazy.py").write_text("from . import unused\n")
    after = import_closure(script, toy)
    assert set(after) - set(before) == {toy.package_root / "pkg" / "unused.py"}


def test_one_memo_for_many_scripts_gives_each_scripts_own_closure():
    """ImportClosures (what the rule files use, one per workflow parse) equals import_closure per script."""
    closures = ImportClosures(LAYOUT)
    scripts = sorted(LAYOUT.helper_dir.glob("*.py"))
    assert len(scripts) > 20
    for script in scripts:
        assert closures(script) == import_closure(script, LAYOUT), script.name


def test_the_disk_cache_gives_the_parsers_closures_and_sees_edits(toy, tmp_path, monkeypatch):
    cache_file = tmp_path / "cache" / "lists.json"
    script = toy.helper_dir / "job.py"
    parsed = import_closure(script, toy)
    assert ImportClosures(toy, ImportListCache(cache_file))(script) == parsed
    assert cache_file.is_file()

    # a warm cache does not parse: the lists come from the file
    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed although the cache holds the file")

    monkeypatch.setattr("aimrepro_workflow.codeinputs.imported_modules", no_parsing)
    assert ImportClosures(toy, ImportListCache(cache_file))(script) == parsed
    monkeypatch.undo()

    # an edited file is keyed by its new content
    (toy.package_root / "pkg" / "lazy.py").write_text("from . import unused\n")
    edited = ImportClosures(toy, ImportListCache(cache_file))(script)
    assert set(edited) - set(parsed) == {toy.package_root / "pkg" / "unused.py"}


def test_a_damaged_or_foreign_cache_counts_as_empty(toy, tmp_path):
    script = toy.helper_dir / "job.py"
    parsed = import_closure(script, toy)
    cache_file = tmp_path / "lists.json"
    for content in ("{not json", json.dumps({"version": "another parser", "entries": {"k": ["x"]}}),
                    json.dumps([1, 2])):
        cache_file.write_text(content)
        assert ImportClosures(toy, ImportListCache(cache_file))(script) == parsed
        assert json.loads(cache_file.read_text())["version"] == ImportListCache.VERSION


def test_an_unwritable_cache_only_costs_the_parsing(toy, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    cache = ImportListCache(blocker / "lists.json")   # its directory cannot be made
    assert ImportClosures(toy, cache)(toy.helper_dir / "job.py") == \
        import_closure(toy.helper_dir / "job.py", toy)


def test_import_cycles_terminate(toy):
    write(toy.package_root, "pkg/lazy.py", "from . import util\n")
    assert toy.package_root / "pkg" / "lazy.py" in import_closure(toy.helper_dir / "job.py", toy)


RULE = re.compile(r"^\s*rule(?: (\w+))?:\n(.*?)(?=^\s*rule(?: \w+)?:|\Z)", re.S | re.M)


def rules_with_scripts():
    found = []
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for name, body in RULE.findall(smk.read_text()):
            script = re.search(r'script:\s*\n\s*"\.\./scripts/([^"]+)"', body)
            if script:
                found.append((name or re.search(r"name:\s*(.+)", body).group(1), body,
                              script.group(1)))
    return found


def test_every_rule_declares_exactly_the_closure_of_its_own_script():
    rules = rules_with_scripts()
    assert len(rules) >= 30
    for name, body, script in rules:
        code = re.findall(r"^\s*code=(.*)$", body, re.M)
        assert code == [f'script_code("{script}"),'], (name, code)


def test_every_closure_covers_what_python_imports_for_the_script():
    """Import each script in a clean interpreter state and compare with its closure."""
    scripts = sorted(p.name for p in LAYOUT.helper_dir.glob("*.py"))
    probe = textwrap.dedent("""
        import importlib.util, json, sys
        helper_dir, names = sys.argv[1], sys.argv[2:]
        sys.path.insert(0, helper_dir)
        loaded = {}
        for name in names:
            for key in [k for k in sys.modules if k.startswith("aimrepro") or k.startswith("_")]:
                if key.startswith("aimrepro") or getattr(sys.modules[key], "__file__", "") \\
                        and sys.modules[key].__file__.startswith(helper_dir):
                    del sys.modules[key]
            spec = importlib.util.spec_from_file_location("script_under_test", f"{helper_dir}/{name}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[name] = sorted(
                (k, m.__file__) for k, m in sys.modules.items()
                if (k == "aimrepro" or k.startswith("aimrepro.")
                    or (getattr(m, "__file__", None) or "").startswith(helper_dir + "/"))
                and getattr(m, "__file__", None))
        print(json.dumps(loaded))
        """)
    done = subprocess.run([sys.executable, "-c", probe, str(LAYOUT.helper_dir), *scripts],
                          capture_output=True, text=True, check=True, timeout=300)
    loaded = json.loads(done.stdout)
    for script in scripts:
        closure = {str(p.relative_to(REPO)) for p in import_closure(LAYOUT.helper_dir / script, LAYOUT)}
        for module, source in loaded[script]:
            if module.startswith("aimrepro"):
                expected = "src/" + module.replace(".", "/") + (
                    "/__init__.py" if source.endswith("__init__.py") else ".py")
            else:
                expected = f"workflow/scripts/{Path(source).name}"
            assert expected in closure, (script, expected)
