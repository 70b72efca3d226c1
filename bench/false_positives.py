"""How often the secret guard refuses text that holds no credential: on the benchmark's notes and skill, on lines
that users write about keys without holding one, and on this repository's own code and prose.

`python bench/false_positives.py [--notes N] [DIR ...]` prints the findings per rule (and where, for files);
extra folders (a virtualenv's site-packages, say) are scanned too. The tests assert that the corpus and the
repository give none, apart from the files listed in DELIBERATE.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import data

from agent_memory import guard

REPO = Path(__file__).resolve().parent.parent

# What the repository's test says "our own files" are: the helper, its tests, benchmarks, Space and docs.
SCANNED = ("helper", "tests", "bench", "build.py", "templates", "skill", "README.md", "docs")
SKIPPED_PARTS = ("__pycache__", ".egg-info", ".pytest_cache", "node_modules/")  # npm packages are not ours
# Files that hold credential-shaped values on purpose, by path, with why. None today: the guard's own test cases
# assemble theirs at run time.
DELIBERATE: dict[str, str] = {}


# Lines that say where a key is kept, style a class named after one, or show a placeholder or a local default,
# and hold no credential: each kind was once refused.
ABOUT_KEYS = (
    "private_key: keys/server.pem",
    "ssl_private_key: certs/site-key.pem",
    "tls_private_key: /etc/ssl/private/site.key",
    'private_key: "~/.ssh/id_ed25519"',
    "private_key: C:\\keys\\server-2024.pem",
    "the deploy key is kept as `api_key: vault/deploy/DEPLOY_KEY`.",
    "pwd: src/lib/utils",
    "PWD: build/x86_64/release-2",
    ".token:hover{color:#ff0000}",
    ".api-key::after{content:'*'}",
    ".secret:nth-child(2n+1){opacity:0.5}",
    "Token: a1b2c3d4",
    "api_key=abcd-1234",
    "password: 87654321",
    "postgres://postgres:postgres@localhost",
    "mysql://root:root@127.0.0.1:3306/app",
    "redis://default:mysecretpassword@localhost:6379/0",
    "amqp://guest:guest@[::1]:5672/",
    "http://admin:admin@app.localhost:8080/",
)


def repository_files(root: Path = REPO) -> list[Path]:
    """Every regular file of SCANNED below `root` (symbolic links are not followed: they lead to files counted
    where they live)."""
    found = []
    for name in SCANNED:
        top = root / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            relative = path.relative_to(root).as_posix()
            if path.is_symlink() or not path.is_file() or any(part in relative for part in SKIPPED_PARTS):
                continue
            if any(parent.is_symlink() for parent in path.relative_to(root).parents if parent != Path(".")):
                continue
            found.append(path)
    return found


def file_findings(paths: list[Path], root: Path = REPO) -> dict[str, list[guard.Finding]]:
    """The guard's findings in each file that has any, by path relative to `root`, read as a skill file is."""
    found = {}
    for path in paths:
        findings = guard.scan_bytes(path.read_bytes())
        if findings:
            found[path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)] = findings
    return found


def corpus_findings(count: int) -> tuple[int, Counter]:
    """How many of the benchmark's `count` notes (and its 40-file skill, and ABOUT_KEYS, one note each) the guard
    would refuse, and the findings per rule."""
    rules: Counter = Counter()
    refused = 0
    about = [line.encode() for line in ABOUT_KEYS]
    for text in [*data.notes(count).values(), *data.skill_folder().values(), *about]:
        findings = guard.scan_bytes(text)
        refused += bool(findings)
        rules.update(finding.rule for finding in findings)
    return refused, rules


def main() -> int:
    parser = argparse.ArgumentParser(description="False positives of the agent-memory secret guard.")
    parser.add_argument("--notes", type=int, default=10_000, help="how many benchmark notes (default 10,000)")
    parser.add_argument("folders", nargs="*", type=Path, help="more folders to scan (every file below them)")
    args = parser.parse_args()

    refused, rules = corpus_findings(args.notes)
    corpus = f"{args.notes} notes, a 40-file skill and {len(ABOUT_KEYS)} lines about keys"
    print(f"benchmark corpus: {corpus}: {refused} refused, findings {dict(rules)}")
    own = repository_files()
    found = file_findings(own)
    unexpected = {path: findings for path, findings in found.items() if path not in DELIBERATE}
    total = sum(len(findings) for findings in unexpected.values())
    print(f"repository: {len(own)} files, {total} findings outside the deliberate test cases")
    for path, findings in sorted(unexpected.items()):
        print(f"  {path}: " + ", ".join(f"line {f.line} {f.rule}" for f in findings))
    for folder in args.folders:
        paths = [path for path in folder.rglob("*") if path.is_file() and not path.is_symlink()]
        found = file_findings(paths, folder)
        rules = Counter(finding.rule for findings in found.values() for finding in findings)
        print(f"{folder}: {len(paths)} files, {len(found)} with findings, {sum(rules.values())} findings {dict(rules)}")
    return 0 if refused == 0 and total == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
