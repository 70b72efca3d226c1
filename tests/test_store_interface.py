"""Every store answers the interface of `store.base.Store` as it is written there: the same methods, with the same
parameters and the same annotated types, so that a caller written against the interface reads true of each
backend (the folder store, the Hub, a bucket in an outage)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import agent_memory.store
from agent_memory.store.base import Store


def backends() -> list[type[Store]]:
    """Every concrete store in the package, found by importing each of its modules (a new backend is checked too)."""
    for module in pkgutil.iter_modules(agent_memory.store.__path__):
        importlib.import_module(f"agent_memory.store.{module.name}")
    found, seen = [], list(Store.__subclasses__())
    while seen:
        one = seen.pop()
        found.append(one)
        seen += one.__subclasses__()
    return sorted(found, key=lambda one: one.__name__)


def interface() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member, eval_str=True)
        for name, member in vars(Store).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }


def test_the_backends_are_found():
    assert {one.__name__ for one in backends()} >= {"FolderStore", "HubStore", "OutageStore"}


def test_every_store_method_has_the_interfaces_signature():
    wanted = interface()
    assert {"ensure", "put", "put_many", "list", "fetch", "holds", "read", "changes"} <= set(wanted)
    differ = []
    for backend in backends():
        for name, signature in wanted.items():
            found = inspect.signature(getattr(backend, name), eval_str=True)  # the types, however they are spelled
            if found != signature:
                differ.append(f"{backend.__name__}.{name}{found} is not Store.{name}{signature}")
    assert differ == []


def test_every_store_implements_each_abstract_method():
    for backend in backends():
        assert not inspect.isabstract(backend), (backend.__name__, backend.__abstractmethods__)
