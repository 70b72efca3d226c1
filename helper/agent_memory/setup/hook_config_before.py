"""What a hook file held, where install put the first thing into it (`hook_config_write` notes it and reads it).

Once our groups are in, `{"hooks": {}}` and a file with no `hooks` at all read the same, yet remove may take out only
what install created: the file, the `hooks` object, an event's list. So install notes, for each container it
filled, whether it created it (None) or how the user spelled it while it was empty (`{ }`, `[\\n]`); remove, when
taking out our group empties a container, deletes it only if install created it, gives back the user's spelling of
one that was theirs, and keeps one that held the user's entries when install came. For the file itself the note is
its whole text (None: there was no file).

Kept per runtime in the state folder, for the one file it was taken of, and read and written only inside the
change that `agent_files_write.edit` makes under its lock. A file installed into before notes were kept has none:
remove then does what it did then (a container emptied by us goes), as no spelling of the user's is known.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import paths
from ..fsutil import open_own, write_atomic
from .json_edits import KeyPath

NOTES_MAX = 1 << 20  # bytes: a notes file any larger is not ours, and is not read
DELETE, RESPELL, KEEP = "delete", "respell", "keep"


class Before:
    """The notes of one runtime's hook file `file` (its real path)."""

    def __init__(self, runtime: str, file: Path) -> None:
        self._path = paths.state_dir() / "hook-files" / f"{runtime}.json"
        self._file = str(file)
        self._known = self._load()
        self._noted: dict[KeyPath, str | None] = {}

    def note(self, path: KeyPath, spelled: str | None) -> None:
        """That install fills the container at `path`: it creates it (None), or it was empty, spelled so."""
        self._noted.setdefault(path, spelled)

    def emptied(self, path: KeyPath) -> tuple[str, str | None]:
        """What becomes of the container at `path` that taking out our group left empty: DELETE (install created
        it), RESPELL with the user's spelling, or KEEP (it held the user's entries when install came)."""
        if self._known is None:
            return DELETE, None  # installed before notes were kept: what it did then
        if path not in self._known:
            return KEEP, None
        spelled = self._known[path]
        return (DELETE, None) if spelled is None else (RESPELL, spelled)

    def save(self) -> None:
        """Keep what this install noted, over what earlier ones did (kept even when empty: that tells remove that
        every other container was the user's)."""
        known = {**(self._known or {}), **self._noted}
        data = {"file": self._file, "containers": [[list(path), spelled] for path, spelled in known.items()]}
        write_atomic(self._path, json.dumps(data).encode())

    def forget(self) -> None:
        """Our groups are out: the notes are spent."""
        self._path.unlink(missing_ok=True)

    def _load(self) -> dict[KeyPath, str | None] | None:
        """The notes for this file; None when there are none, or they are for another file, or not in our shape
        (the state folder is ours, but what is read from disk is checked all the same)."""
        try:
            with open(open_own(self._path), "rb") as handle:
                data = json.loads(handle.read(NOTES_MAX + 1))
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("file") != self._file or not isinstance(data.get("containers"), list):
            return None
        known: dict[KeyPath, str | None] = {}
        for entry in data["containers"]:
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list)):
                return None
            path, spelled = entry
            if not all(isinstance(step, str) for step in path) or not (spelled is None or isinstance(spelled, str)):
                return None
            known[tuple(path)] = spelled
        return known
