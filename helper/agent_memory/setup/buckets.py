"""The machine's bucket, as `config set bucket` and bootstrap choose it: checked, a folder store that is not there
yet created owner-only (its parent must exist), and a switch from another bucket said."""

from __future__ import annotations

import shlex
from pathlib import Path

from .. import commands
from ..config import settings as config_file
from ..config.context import Context
from ..errors import UsageError
from ..names import folder_path
from ..store.base import StoreError
from ..store.bucket import check_private, parse_bucket

TYPE_CHECKING = False  # typing's flag without loading typing: type checkers read this name as True
if TYPE_CHECKING:
    from ..contract import BucketSet


def set_bucket(ctx: Context, spec: str) -> BucketSet:
    """Make `spec` this machine's bucket: `{"bucket", "created", "was", "unchanged"}` (`was`: the bucket it
    replaces, None if there was none or it is the same)."""
    uri = parse_bucket(spec)
    created = False
    if (folder := folder_path(uri)) is not None:
        check_private(uri)
        if not folder.parent.is_dir():
            raise no_parent(folder, f"run: {commands.line('config', 'set', 'bucket', uri)}")
        try:
            created = ctx.store_for(uri).ensure(create=True)
        except StoreError as exc:
            exc.during(f"Could not use the folder store {folder}")
            raise
        uri = parse_bucket(uri)  # now that it exists: the one URI of the folder, links resolved
    previous = config_file.update(bucket=uri)["bucket"]
    return {
        "bucket": uri,
        "created": created,
        "was": previous if previous and previous != uri else None,  # type: ignore[typeddict-item]  # unchecked: a damaged value it replaced is shown as it was
        "unchanged": previous == uri,
    }


def no_parent(folder: Path, again: str) -> UsageError:
    """The error for a folder store whose parent folder does not exist; `again`: what to do once it does."""
    return UsageError(
        f"Cannot create the folder store {folder}: its parent folder does not exist (a typo, or a drive that is "
        "not mounted?). Nothing was changed.",
        next_step=f"mkdir -p {shlex.quote(str(folder.parent))}, then {again}",
    )
