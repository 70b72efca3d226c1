"""The kinds of upload that the outbox carries, as their own domains describe them: notes and skill publications.

What retries or lists every upload (`pending`, `status`, the Stop hook) takes them from here.
"""

from __future__ import annotations

from ..memory.pending import NOTES
from ..skills.pending import SKILLS

KINDS = (NOTES, SKILLS)
