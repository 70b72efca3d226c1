"""The writing half of the hook configuration pair (what is installed, and its state: `hook_config_read`).

agent-memory's hooks in each runtime's own hook file: install and remove, as byte-exact edits of the user's file
(what our entries look like, which are ours and their state: `hook_config_read`).

The file belongs to the user: the edit changes only the bytes it must (key order, indentation and everything else
stay as they were), a file with nothing to change is not written at all, and a backup outside the agent's folders
comes first. A file that does not parse is refused and left as it is. Install writes our one shape of group
(`hook_config_read`), and remove takes out only groups of that shape; a group of ours whose helper moved is updated in
place rather than installed twice. What remove leaves empty goes only if install created it: the `hooks` object,
an event's list, the file; one of the user's stays, spelled as they wrote it (`hook_config_before`).

Our groups are appended after the user's, never inserted before them, because Codex keys its trust by a group's
position (X3); for the same reason a group of ours taken out from before another group is left as an empty
placeholder `{"hooks": []}`, which Codex accepts, so the user's later groups keep their keys and their trust. An
install puts our group back in that placeholder: where it was, with the same key, and no empty group is left.

The command line guards itself (`command.guarded`): `[ ! -x HELPER ] || HELPER hook ...` exits 0 in silence when
the helper is gone, so an install that was deleted without `uninstall` never shows a hook failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from .. import agents
from . import agent_files_write
from . import hook_config_read as entries
from .command import helper_command
from .hook_config_before import DELETE, RESPELL, Before
from .json_edits import Document, KeyPath

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import HookFile
    from .shape import HookHandler

PLACEHOLDER: dict[str, object] = {"hooks": []}


def install(agent: str = "both") -> list[HookFile]:
    """Install our hooks for the runtimes `agent` names; each runtime's status afterwards, with `changed`."""
    check(agent)  # all files or none: a refused file leaves the other runtime's untouched too
    return [_edit(runtime, _install_into, installing=True) for runtime in agents.selected(agent)]


def remove(agent: str = "both") -> list[HookFile]:
    """Take out only what install wrote (and the containers it created, which that leaves empty); each runtime's
    status afterwards."""
    check(agent)
    return [_edit(runtime, _remove_from, installing=False) for runtime in agents.selected(agent)]


def check(agent: str = "both") -> None:
    """Refuse now (AgentMemoryError) if a hook file of these runtimes could not be edited safely."""
    for runtime in agents.selected(agent):
        entries.read(Path(os.path.realpath(entries.hooks_file(runtime))))


# -- editing ------------------------------------------------------------------------------------------------


def _edit(runtime: str, change: Callable[[str, Document, Before], None], *, installing: bool) -> HookFile:
    path = entries.hooks_file(runtime)
    after: list[Document] = []

    def edited(text: str | None) -> str | None:
        document = _document(path, text)
        before = Before(runtime, Path(os.path.realpath(path)))  # read here, under the agents' files lock
        start = document.text
        if not document.value:  # an empty file, or none: what remove gives back
            before.note((), text)
        change(runtime, document, before)
        after.append(document)
        if document.text == start:
            return text
        if not document.consistent():  # never write what we did not mean: the user's file stays as it is
            raise entries.refused(path, "agent-memory could not edit it without changing something else")
        if installing:
            before.save()
        else:
            before.forget()
        return document.text if document.value else _emptied_file(document, before)

    result = agent_files_write.edit(path, runtime, edited, empty="{}\n")
    return {**entries.report(runtime, after[-1].value, helper_command()), **result}


def _emptied_file(document: Document, before: Before) -> str | None:
    """The file's text once remove took out all it held (None: no file), as it was before install."""
    action, spelled = before.emptied(())
    if action == DELETE:
        return None  # nothing but our hooks was ever in it: no empty file
    if action == RESPELL and spelled is not None:
        if not spelled.strip():
            return spelled  # an empty file of the user's, or one of blank lines
        document.respell((), Document(spelled).spelled(()))
    return document.text


def _install_into(runtime: str, document: Document, before: Before) -> None:
    module = agents.runtime(runtime)
    helper = helper_command()
    for event, argument, timeout in module.HOOKS:
        wanted = _handler(module, helper, argument, timeout)
        groups = entries.groups_of(document.value, event)
        ours = entries.our_groups(groups, runtime, argument, timeout)
        own = entries.own_commands(groups, runtime, argument, timeout)
        if entries.runs_this_helper(own, wanted["command"], module.hook_command(helper, argument)):
            keep = None  # the user's own entry runs it already: a group of ours would run it twice
        elif ours:
            keep = ours[0]
            if entries.command_of(groups[keep]) != wanted["command"]:  # the helper moved
                document.replace(("hooks", event, keep, "hooks", 0, "command"), wanted["command"])
        elif own:
            continue  # the user's own entry runs another helper: theirs to change, and status says so
        elif PLACEHOLDER in groups:  # where a remove left ours: back in its place, under the key it had
            document.replace(("hooks", event, groups.index(PLACEHOLDER)), {"hooks": [wanted]})
            continue
        else:
            _append(document, event, {"hooks": [wanted]}, before)
            continue
        for index in reversed(ours):  # from the last, so that the indexes of those before stay valid
            if index != keep:
                _take_out(document, module, event, index, before)


def _remove_from(runtime: str, document: Document, before: Before) -> None:
    module = agents.runtime(runtime)
    for event, argument, timeout in module.HOOKS:
        for index in reversed(entries.our_groups(entries.groups_of(document.value, event), runtime, argument, timeout)):
            _take_out(document, module, event, index, before)


def _append(document: Document, event: str, group: dict[str, object], before: Before) -> None:
    """Add `group` after every group of `event`, creating the event (and the hooks object) if missing; what it
    creates, and each container it fills while empty, noted in `before`."""
    if "hooks" not in document.value:
        before.note(("hooks",), None)
        before.note(("hooks", event), None)
        document.insert((), {event: [group]}, key="hooks")
    elif event not in document.value["hooks"]:
        _filling(document, ("hooks",), before)
        before.note(("hooks", event), None)
        document.insert(("hooks",), [group], key=event)
    else:
        _filling(document, ("hooks", event), before)
        document.insert(("hooks", event), group)  # appended: never shift the index of a group the user trusted


def _filling(document: Document, path: KeyPath, before: Before) -> None:
    if not _container(document, path):
        before.note(path, document.spelled(path))  # the user's empty container: given back as they spelled it


def _take_out(document: Document, module: ModuleType, event: str, index: int, before: Before) -> None:
    """Take out our group at `index`; where later groups' trust hangs on their index, leave a placeholder. A
    container this leaves empty goes only if install created it (`hook_config_before`)."""
    groups = document.value["hooks"][event]
    if module.TRUST_BY_POSITION and index < len(groups) - 1:
        document.replace(("hooks", event, index), PLACEHOLDER)
        return
    document.delete(("hooks", event, index))
    for path in (("hooks", event), ("hooks",)):  # the inner container first: its going may empty the outer
        if path[-1] not in _container(document, path[:-1]) or _container(document, path):
            return
        action, spelled = before.emptied(path)
        if action == DELETE:
            document.delete(path)
            continue
        if action == RESPELL and spelled is not None:
            document.respell(path, spelled)
        return


def _container(document: Document, path: KeyPath) -> dict[str, object] | list[object]:
    found: dict[str, object] | list[object] = document.value
    for step in path:
        found = found[step]  # type: ignore[index, assignment]  # path of containers we just read
    return found


def _document(path: Path, text: str | None) -> Document:
    """The file's `text` (None: there is none) to edit; refused (AgentMemoryError) as `hook_config_read.parse` refuses
    it."""
    entries.parse(path, text)
    return Document(text or "")


def _handler(module: ModuleType, helper: str, argument: str, timeout: int) -> HookHandler:
    """The one handler install writes for an event."""
    return {"type": "command", "command": entries.command_line(module, helper, argument), "timeout": timeout}
