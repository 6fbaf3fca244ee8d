"""Every module of the package imports (catches rot in modules no other test touches)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import aimrepro

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(aimrepro.__path__, prefix="aimrepro.")
)


def test_the_package_has_modules():
    assert "aimrepro.records" in MODULES and "aimrepro.cli" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name):
    importlib.import_module(name)
