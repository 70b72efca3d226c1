"""Every user-facing error says what to do next: the source is walked for every error the package can raise,
and the errors a new user met without a `Next:` line are run through the command line."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import tools
from agent_memory import errors

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "helper" / "agent_memory"


def _error_classes() -> set[str]:
    """AgentMemoryError and every subclass of it, in errors.py or defined anywhere else in the sources."""
    found = {cls.__name__ for cls in _subclasses(errors.AgentMemoryError)}
    classes = [
        node
        for file in _sources()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    ]
    while new := {c.name for c in classes if c.name not in found and any(_name(b) in found for b in c.bases)}:
        found |= new
    return found


def _subclasses(cls: type) -> list[type]:
    return [cls, *(sub for direct in cls.__subclasses__() for sub in _subclasses(direct))]


def _sources() -> list[Path]:
    """The package, and the Python files at the repository's root (build.py), which use the same errors."""
    return sorted(PACKAGE.rglob("*.py")) + sorted(REPO.glob("*.py"))


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def missing_next_steps(source: str, classes: set[str]) -> list[str]:
    """Constructions of an error class (directly, or through a name bound to one) without a usable next_step."""
    tree = ast.parse(source)
    # a name assigned an expression that mentions an error class (`error = AccessError if ... else ...`)
    aliases = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(_name(inner) in classes for inner in ast.walk(node.value))
        and not isinstance(node.value, ast.Call)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name(node.func) in classes | aliases):
            continue
        keyword = next((k for k in node.keywords if k.arg == "next_step"), None)
        unpacked = any(k.arg is None for k in node.keywords)
        empty = keyword is not None and isinstance(keyword.value, ast.Constant) and not keyword.value.value
        if keyword is None or empty or unpacked:
            problems.append(f"line {node.lineno}: {ast.unparse(node)[:100]}")
    return problems


def test_the_checker_finds_what_it_must():
    classes = {"AgentMemoryError", "UsageError"}
    bad = (
        "raise UsageError('x')\n"
        "raise errors.AgentMemoryError('x', next_step='')\n"
        "error = UsageError if a else AgentMemoryError\nraise error('x')\n"
        "raise UsageError('x', **extra)\n"
    )
    assert len(missing_next_steps(bad, classes)) == 4
    good = "raise UsageError('x', next_step='agent-memory status')\nerror = make(x)\nraise error\n"
    assert missing_next_steps(good, classes) == []


def _supplying_their_own(classes: set[str]) -> set[str]:
    """Error classes whose `__init__` takes no next_step and always passes one to the base class itself."""
    found = set()
    for file in _sources():
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ClassDef) and node.name in classes):
                continue
            init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            if init is None or any(a.arg == "next_step" for a in init.args.args + init.args.kwonlyargs):
                continue
            calls = [c for c in ast.walk(init) if isinstance(c, ast.Call) and _name(c.func) == "__init__"]
            steps = [k.value for call in calls for k in call.keywords if k.arg == "next_step"]
            if steps and all(_never_empty(v) for v in steps):
                found.add(node.name)
    return found


def _never_empty(value: ast.expr) -> bool:
    """A non-empty string constant, an f-string with non-empty text of its own (`f"rm {path}"`), or a choice
    between two such (`f"mv {path} ..." if oversized else f"rm {path}"`)."""
    if isinstance(value, ast.IfExp):
        return _never_empty(value.body) and _never_empty(value.orelse)
    if isinstance(value, ast.JoinedStr):
        return any(isinstance(part, ast.Constant) and part.value for part in value.values)
    return isinstance(value, ast.Constant) and bool(value.value)


def test_every_error_in_the_sources_has_a_next_step():
    classes = _error_classes()
    classes -= _supplying_their_own(classes)
    assert {"AgentMemoryError", "UsageError", "NotSetUp", "AccessError", "ContentRefused"} <= classes
    problems = {
        str(file.relative_to(REPO)): found
        for file in _sources()
        if (found := missing_next_steps(file.read_text(encoding="utf-8"), classes))
    }
    assert problems == {}


def test_an_error_without_a_next_step_cannot_be_made():
    with pytest.raises(TypeError):
        errors.UsageError("no way forward")  # type: ignore[call-arg]


# -- the errors a new user met without a Next line, through the command line ------------------------------------


def _assert_next(result, code: int, fragment: str) -> str:
    tools.exited(result, code)
    lines = result.err.strip().splitlines()
    error = next(line for line in lines if line.startswith("Error: "))
    assert fragment in error, result.err
    step = lines[lines.index(error) + 1]
    assert step.startswith("Next: ") and len(step) > len("Next: ") + 5, result.err
    return step


def test_invalid_limit(machine, folder_store):
    machine.setup(folder_store)
    step = _assert_next(machine.run("search", "x", "--limit", "0"), 2, "--limit")
    assert "--limit 10" in step
    _assert_next(machine.run("search", "x", "--limit", "many"), 2, "invalid int value")


def test_nul_in_the_body_and_a_long_title(machine, folder_store):
    machine.setup(folder_store)
    _assert_next(machine.run("save", "--title", "t", input=b"a\x00b"), 5, "NUL")
    step = _assert_next(machine.run("save", "--title", "x" * 241, input="body"), 2, "title is longer")
    assert "--title" in step
    _assert_next(machine.run("save", "--tag", " ", input="body"), 2, "tag is empty")
    _assert_next(machine.run("save", "--kind", "memo", input="body"), 2, "invalid choice")
    assert machine.run("pending", "--json").json["notes"] == []


def test_configuration_that_is_not_an_object(machine):
    config = machine.state / "config" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text("[1, 2]\n")
    step = _assert_next(machine.run("config", "show"), 1, "does not hold a JSON object")
    assert str(config) in step
    _assert_next(machine.run("project", "map", "demo"), 1, "does not hold a JSON object")
    assert config.read_text() == "[1, 2]\n"


def test_an_unreachable_hub(machine):
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": "hf_" + "c" * 34}  # the discard port: refused
    result = machine.run("bootstrap", "--project", "demo", env=env)
    step = _assert_next(result, 1, "Could not reach the Hugging Face Hub")
    assert "network" in step and "bootstrap" in step
    assert not (machine.state / "config" / "config.json").exists()


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: (d / "SKILL.md").write_text("no frontmatter\n"), "must start with YAML"),
        (lambda d: (d / "SKILL.md").write_text("---\nname: x-skill\n---\nbody\n"), "non-empty `description`"),
        (lambda d: (d / "SKILL.md").write_text("---\nname: Bad_Name\ndescription: d\n---\n"), "Invalid skill name"),
        (lambda d: (d / "SKILL.md").unlink(), "has no SKILL.md"),
        (lambda d: (d / "link.md").symlink_to(d / "SKILL.md"), "symbolic link"),
        (lambda d: (d / "big.bin").write_bytes(b"0" * (5 * 1024 * 1024 + 1)), "a skill file may have at most"),
    ],
    ids=["no-frontmatter", "no-description", "bad-name", "no-skill-md", "symlink", "big"],
)
def test_skill_validation(machine, folder_store, tmp_path, mutate, fragment):
    machine.setup(folder_store)
    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: x-skill\ndescription: Does x.\n---\nbody\n")
    mutate(folder)
    step = _assert_next(machine.run("publish-skill", str(folder)), 5, fragment)
    assert "publish-skill" in step
    assert json.loads(machine.run("pending", "--json").out)["skills"] == []


def test_a_skill_name_that_differs_says_which_to_use(machine, folder_store, tmp_path):
    machine.setup(folder_store)
    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: x-skill\ndescription: Does x.\n---\nbody\n")
    step = _assert_next(machine.run("publish-skill", str(folder), "--name", "y-skill"), 5, "differs")
    assert "--name x-skill" in step
