"""scheduler_core.api's public surface: __all__ is sorted, unique and every name importable."""

from __future__ import annotations

import importlib
import re

import pytest

import scheduler_core.api as api

SUBMODULES = ["affinity", "manifest", "node", "objects", "pod", "quantity", "resources",
              "selectors"]


def isort_key(name: str) -> tuple[int, list]:
    """ruff RUF022's isort-style order: SCREAMING_CASE, then CamelCase, then the rest;
    natural order inside each group."""
    if name.isupper():
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    natural = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
    return group, natural


def _all_of(module_name: str) -> list[str]:
    return list(importlib.import_module(module_name).__all__)


MODULES = ["scheduler_core.api"] + [f"scheduler_core.api.{m}" for m in SUBMODULES]


@pytest.mark.parametrize("module_name", MODULES)
def test_all_is_sorted_and_unique(module_name: str) -> None:
    names = _all_of(module_name)
    assert names == sorted(names, key=isort_key)
    assert len(names) == len(set(names))


@pytest.mark.parametrize("module_name", MODULES)
def test_every_name_in_all_is_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.{name} is in __all__ but missing"
        namespace: dict[str, object] = {}
        exec(f"from {module_name} import {name}", namespace)  # the real import statement
        assert namespace[name] is getattr(module, name)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from scheduler_core.api import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(api.__all__)


def test_package_re_exports_come_from_the_api_package() -> None:
    for name in api.__all__:
        obj = getattr(api, name)
        module = getattr(obj, "__module__", None)
        if isinstance(obj, type) or callable(obj):
            assert module is not None and module.startswith("scheduler_core.api."), name


def test_package_exports_the_documented_core() -> None:
    expected = {"Pod", "PodSpec", "Node", "Taint", "Toleration", "LabelSelector", "NodeSelector",
                "NodeSelectorTerm", "Affinity", "parse_quantity", "parse_object",
                "UnsupportedKindError"}
    assert expected <= set(api.__all__)


def test_isort_key_orders_groups() -> None:
    names = ["parse_object", "Pod", "MODELLED_KINDS", "Affinity", "DEFAULT_SCHEDULER_NAME"]
    assert sorted(names, key=isort_key) == ["DEFAULT_SCHEDULER_NAME", "MODELLED_KINDS",
                                            "Affinity", "Pod", "parse_object"]
