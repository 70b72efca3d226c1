"""The kinds of upload that the outbox carries, as their own domains describe them: notes, skill publications, and
the versions of the runtimes' own memory files that sync pushes.

What retries or lists every upload (`pending`, `status`, the Stop hook) takes them from here.
"""

from __future__ import annotations

from ..memory.pending import NOTES
from ..skills.pending import SKILLS
from ..sync.uploads import SYNC

KINDS = (NOTES, SKILLS, SYNC)
