"""Project mapping and resolution, through the command line."""

from __future__ import annotations

import os

import tools


def test_map_and_show(machine):
    result = machine.run("project", "map", "demo", "--json")
    tools.exited(result)
    assert result.json == {"project": "demo", "root": str(machine.work.resolve()), "origin": None}
    shown = machine.run("project", "show", "--json")
    assert shown.json == {"project": "demo", "root": str(machine.work.resolve()), "found": "mapped", "via": None}
    assert machine.run("project", "show").out == f"project: demo\nroot: {machine.work.resolve()}\nfound: mapped\n"


def test_longest_ancestor_wins_on_directory_boundaries(machine, tmp_path):
    outer = tmp_path / "a" / "proj"
    inner = outer / "sub" / "inner"
    sibling = tmp_path / "a" / "proj2"
    for folder in (inner, sibling):
        folder.mkdir(parents=True)
    tools.exited(machine.run("project", "map", "outer", str(outer)))
    tools.exited(machine.run("project", "map", "inner", str(inner)))

    assert machine.run("project", "show", "--json", cwd=inner / ".").json["project"] == "inner"
    (inner / "deeper").mkdir()
    assert machine.run("project", "show", "--json", cwd=inner / "deeper").json["project"] == "inner"
    assert machine.run("project", "show", "--json", cwd=outer / "sub").json["project"] == "outer"

    unmapped = machine.run("project", "show", "--json", cwd=sibling)
    tools.exited(unmapped, 3)
    assert "not mapped" in unmapped.err and "agent-memory project map NAME" in unmapped.err
    assert unmapped.json["exit_code"] == 3


def test_resolution_uses_the_canonical_directory(machine, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    os.symlink(real, link)
    tools.exited(machine.run("project", "map", "viaLink", str(link)))
    assert machine.run("project", "show", "--json", cwd=real).json["root"] == str(real)


def test_remapping_a_directory_replaces_its_project(machine):
    machine.run("project", "map", "first")
    machine.run("project", "map", "second")
    assert machine.run("project", "show", "--json").json["project"] == "second"


def test_invalid_names_and_directories_change_nothing(machine, tmp_path):
    config = machine.state / "config" / "config.json"
    for bad in ("../escape", "a/b", "", ".hidden", "with space", "x" * 101):
        result = machine.run("project", "map", bad)
        tools.exited(result, 2, about=bad)
        assert "Invalid project name" in result.err
    missing = machine.run("project", "map", "ok", str(tmp_path / "does-not-exist"))
    tools.exited(missing, 2)
    assert not config.exists()
