"""Project names and the mapping of local directories to them.

A project is resolved from the longest configured ancestor of the canonical current directory, on
directory boundaries. A directory that no mapping covers follows its git repository (`config.repository`):
inside a linked worktree, it has the project of the same place in the main checkout; inside another clone, the
project of the same place in a mapped checkout whose `origin` is the same. Nothing is guessed beyond that: an
unmapped repository, or an origin whose checkouts are mapped to different projects, is an error that says how
to map it. An explicit mapping always wins.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import commands, names
from ..errors import NotSetUp, UsageError
from . import repository
from .settings import editing, load

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import Mapping, Place
    from .shape import Config


def canonical(directory: str | os.PathLike[str]) -> Path:
    """The absolute, symlink-free form of a directory."""
    return Path(directory).expanduser().resolve()


def map_directory(name: str, directory: str | os.PathLike[str] | None = None) -> Place:
    """Map `directory` (default: the current one) to project `name`; returns `{"project", "root"}`."""
    names.project(name)
    root = mappable(directory)
    with editing() as config:
        add_mapping(config, name, root)
    return {"project": name, "root": str(root)}


def mappable(directory: str | os.PathLike[str] | None = None) -> Path:
    """The canonical form of `directory` (default: the current one), if it can be mapped; else UsageError."""
    root = canonical(directory if directory is not None else Path.cwd())
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory.", next_step=commands.line("project", "map", "NAME", "DIR"))
    try:
        str(root).encode("utf-8")
    except UnicodeEncodeError:  # the configuration is UTF-8 JSON: such a path could not be recorded
        raise UsageError(
            f"The path {str(root).encode('utf-8', 'surrogateescape')!r} is not valid UTF-8, so it cannot be mapped.",
            next_step="rename the folder to a UTF-8 name, then map it again",
        ) from None
    return root


def unmap_directory(directory: str | os.PathLike[str] | None = None) -> Place:
    """Remove the mapping of `directory` (default: the current one): `{"project", "root"}` it had; UsageError,
    with nothing changed, if no mapping is of that very folder."""
    root = canonical(directory if directory is not None else Path.cwd())
    with editing() as config:
        mappings = config.get("projects") or {}
        if str(root) not in mappings:
            raise not_mapped(root, mappings)
        name = mappings.pop(str(root))
    return {"project": name, "root": str(root)}


def not_mapped(root: Path, mappings: dict[str, str]) -> UsageError:
    """Why `root` cannot be unmapped: it is not mapped itself (the folder that covers it, if one does)."""
    if covering := _mapped(root, mappings):
        return UsageError(
            f"{root} is not mapped itself: it is inside {covering['root']}, mapped to project {covering['project']}.",
            next_step=commands.line("project", "unmap", covering["root"]),
        )
    return UsageError(f"{root} is not mapped on this machine.", next_step=commands.line("project", "show"))


def add_mapping(config: Config, name: str, root: Path) -> None:
    """Record in `config` (being edited) that `root` belongs to project `name`."""
    config.setdefault("projects", {})[str(root)] = name  # `load` made sure that it is an object


def resolve(directory: str | os.PathLike[str] | None = None, config: Config | None = None) -> Mapping:
    """The project of `directory` (default: the current one), or NotSetUp: `{"project", "root", "found", "via"}`,
    where `root` is the mapped folder, `found` says how (`mapped`, `worktree` of the main checkout `via`, or
    `origin`: a checkout mapped on this machine has the same origin URL, `via`)."""
    here = canonical(directory if directory is not None else Path.cwd())
    mappings = (config if config is not None else load()).get("projects", {})
    if mapped := _mapped(here, mappings):
        return {**mapped, "found": "mapped", "via": None}
    repo = repository.find(here)
    if repo is not None:
        inside = here.relative_to(repo.top)
        main = repo.main_checkout
        if repo.is_linked_worktree and main is not None and (mapped := _mapped(main / inside, mappings)):
            return {**mapped, "found": "worktree", "via": str(main)}
        if (origin := repo.origin()) is not None:
            claims = _same_origin(origin, inside, repo, mappings)
            if len({claim["project"] for claim in claims}) == 1:
                return {**claims[0], "found": "origin", "via": origin}
            if claims:
                listed = ", ".join(f"{c['project']} ({c['root']})" for c in claims)
                raise NotSetUp(
                    f"{here} is not mapped, and the checkouts mapped on this machine with its origin {origin} "
                    f"belong to different projects: {listed}.",
                    next_step=_map_command(here),
                )
    raise NotSetUp(f"{here} is not mapped to a project on this machine.", next_step=_map_command(here))


def _mapped(here: Path, mappings: dict[str, str]) -> Place | None:
    """`{"project", "root"}` of the longest mapped ancestor of `here` (or `here` itself), else None."""
    best: tuple[int, str, str] | None = None
    for root, name in mappings.items():
        root_path = Path(root)
        if (here == root_path or root_path in here.parents) and (best is None or len(root_path.parts) > best[0]):
            best = (len(root_path.parts), name, root)
    return None if best is None else {"project": best[1], "root": best[2]}


def _same_origin(origin: str, inside: Path, repo: repository.Repository, mappings: dict[str, str]) -> list[Place]:
    """The mappings of the place `inside` in every other mapped checkout whose origin is `origin`, one per root.

    Only a directory that no mapping covers pays for this: one walk up and one config read per mapped folder.
    """
    claims: dict[str, Place] = {}
    seen = {repo.common_dir}
    for root in mappings:
        other = repository.find(Path(root))
        if other is None or other.common_dir in seen:
            continue
        seen.add(other.common_dir)
        if other.origin() == origin and (mapped := _mapped(other.top / inside, mappings)):
            claims.setdefault(mapped["root"], mapped)
    return sorted(claims.values(), key=lambda claim: claim["root"])


def how_found(mapping: Mapping) -> str:
    """How a resolved project was found, in words (for `project show` and `status`)."""
    if mapping.get("found") == "worktree":
        return f"worktree of {mapping['via']}"
    if mapping.get("found") == "origin":
        return f"same origin as {mapping['root']} ({mapping['via']})"
    return "mapped"


def _map_command(path: Path) -> str:
    """The command that maps `path`; for a folder whose name is not UTF-8 (which could not be recorded), a rename."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return f"rename the folder to a UTF-8 name, then run in it: {commands.line('project', 'map', 'NAME')}"
    return commands.line("project", "map", "NAME", str(path))
