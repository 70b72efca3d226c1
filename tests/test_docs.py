"""The README and docs/: the command reference matches the commands, the prose keeps to short sentences and
paragraphs, the README stays a door (about 200 lines), and every relative link and anchor leads somewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import command_reference
import prose
import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES = sorted((REPO / "docs").glob("*.md"))
WRITTEN = [README, *(page for page in PAGES if page != command_reference.PAGE)]  # the generated page is help text
README_LINES = 220
MEDIAN_WORDS = 20
PARAGRAPH_WORDS = 120

# a paragraph of the README as it stood before docs/ (its Quick start's note on the test command, cut short)
WALL = (
    "Run the test suite (it installs what the tests need into `.venv`, then runs the linter and pytest; the pinned "
    "npm packages are installed with `npm ci` on first use, and tests that need Debian's `chromium` are skipped when "
    "it is missing, with the reason in pytest's summary; a check that needs `zsh` or `shellcheck` is left out with a "
    "warning in the same summary: `.ci/run` installs them all and runs everything). Once installed, it runs offline: "
    "the only tests that reach the package index (marked `registry`: the Space's install commands, whose dependencies "
    "pip downloads once) are skipped with pip's reason when it is out of reach, and the npm packages likewise. On a "
    "loaded machine too: the concurrency tests' budgets and waits, and the commands' and hooks' network budgets, grow "
    "with the load average, and a command that exits with an unexpected code shows its stdout and stderr.\n"
)


def test_the_command_reference_is_generated_from_the_commands():
    expected = command_reference.render()
    current = command_reference.PAGE.read_text() if command_reference.PAGE.exists() else ""
    assert current == expected, f"docs/commands.md is out of date: run `{command_reference.REGENERATE}`"


# every other CPython the machine has (pyenv's), from the oldest the package supports: --help must read alike on each
OTHER_PYTHONS = sorted(
    str(path)
    for path in Path.home().glob(".pyenv/versions/3.1[0-9]*/bin/python")
    if path.resolve() != Path(sys.executable).resolve()
)
SAMPLE_HELP = """
import sys
sys.path.insert(0, sys.argv[1])
from agent_memory.cli.parsing import Parser
parser = Parser(prog="agent-memory sample")
parser.add_argument("-o", "--out", metavar="PATH", help="where it goes")
both = parser.add_mutually_exclusive_group()
both.add_argument("--hooks", action="store_true", help="install them")
both.add_argument("--no-hooks", action="store_true", help="leave them out")
for name in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot"):
    parser.add_argument("--" + name, metavar="NAME", help="a long option")
words = parser.add_subparsers(dest="action", metavar="ACTION")
words.add_parser("install-everything", help="a word longer than the help column")
words.add_parser("go", help="a short word")
sys.stdout.write(parser.format_help())
"""


@pytest.mark.slow
@pytest.mark.skipif(not OTHER_PYTHONS, reason="no other CPython 3.10+ on this machine (pyenv's) to compare with")
@pytest.mark.parametrize("python", OTHER_PYTHONS)
def test_help_and_the_command_reference_read_alike_on_every_python(python):
    """argparse lays help out differently from one Python to the next (3.13 moved the ACTION column, broke a group
    of options across usage lines, and wrote `-o, --out PATH`): the help of the package, and so docs/commands.md,
    is the same whichever Python writes it."""
    env = {**os.environ, "COLUMNS": "60", "LC_ALL": "C.UTF-8"}
    helper = str(REPO / "helper")

    def sample(interpreter: str) -> str:
        argv = [interpreter, "-c", SAMPLE_HELP, helper]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=True).stdout

    here = sample(sys.executable)
    assert "-o PATH, --out PATH" in here and "[--hooks | --no-hooks]" in here and "install-everything\n" in here
    assert sample(python) == here
    render = "import sys, command_reference; sys.stdout.write(command_reference.render())"
    argv = [python, "-c", render]
    written = subprocess.run(argv, capture_output=True, text=True, cwd=REPO / "tests", timeout=600, check=True).stdout
    assert written == command_reference.PAGE.read_text()


def test_the_readme_is_a_door():
    lines = README.read_text().count("\n")
    assert lines <= README_LINES, f"README.md has {lines} lines (at most {README_LINES}): move the detail to docs/"


@pytest.mark.parametrize("path", WRITTEN, ids=lambda path: str(path.relative_to(REPO)))
def test_short_sentences_and_paragraphs(path: Path):
    text = path.read_text()
    median = prose.median_sentence(text)
    assert median < MEDIAN_WORDS, f"{path.name}: median sentence of {median} words (under {MEDIAN_WORDS} wanted)"
    long = [f"line {unit.line}: {unit.words()} words" for unit in prose.long_paragraphs(text, PARAGRAPH_WORDS)]
    assert not long, f"{path.name}: paragraphs over {PARAGRAPH_WORDS} words: {', '.join(long)}"


def test_the_prose_check_catches_a_wall_of_text():
    assert prose.median_sentence(WALL) >= MEDIAN_WORDS
    assert [unit.line for unit in prose.long_paragraphs(WALL, PARAGRAPH_WORDS)] == [1]
    short = "Run the tests. They take a few minutes.\n\n- A list item: `.ci/test --help` is one word.\n"
    assert prose.sentence_lengths(short) == [3, 5, 7] and [unit.line for unit in prose.long_paragraphs(short, 6)] == [
        1
    ]  # the list item is no paragraph
    fenced = "```sh\n" + WALL + "```\n\n| a | " + WALL.strip() + " |\n"
    assert prose.sentence_lengths(fenced) == []


def _anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces as hyphens, repeats numbered)."""
    seen: dict[str, int] = {}
    anchors = set()
    in_fence = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        heading = re.sub(r"[`*]", "", line.lstrip("#").strip()).lower()
        slug = re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda path: str(path.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(path: Path):
    broken = []
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address: not this repository's to check
        file, _, anchor = target.partition("#")
        destination = (path.parent / file).resolve() if file else path
        if not destination.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination.read_text()):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{path.name}: broken links: {', '.join(broken)}"


def test_links_into_the_docs_from_the_code_lead_somewhere():
    """Messages, templates and comments that send a reader to a page name one that exists, at a heading it has."""
    broken = []
    for source in [*REPO.glob("helper/**/*.py"), *REPO.glob("templates/*"), REPO / "build.py"]:
        for page, anchor in re.findall(r"(docs/[\w-]+\.md|README\.md)#([\w-]+)", source.read_text(errors="replace")):
            if anchor not in _anchors((REPO / page).read_text()):
                broken.append(f"{source.relative_to(REPO)}: {page}#{anchor}")
    assert not broken, f"links to missing headings: {', '.join(broken)}"
