"""Every module of the package imports (catches rot in modules no other test touches)."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import pytest

import aimrepro

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(aimrepro.__path__, prefix="aimrepro.")
)

#: Modules that need an optional extra, and the module the extra installs.
OPTIONAL = {"aimrepro.backends.torch_kernels": "torch"}


def test_the_package_has_modules():
    assert "aimrepro.records" in MODULES and "aimrepro.cli" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    extra = OPTIONAL.get(name)
    if extra is not None and importlib.util.find_spec(extra) is None:
        pytest.skip(f"{name} needs {extra}, the optional extra .[gpu], which is not installed")
    importlib.import_module(name)
