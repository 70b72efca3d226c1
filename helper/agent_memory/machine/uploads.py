"""The kinds of upload that the outbox carries, as their own domains describe them: notes and skill publications.

What retries or lists every upload (`pending`, `status`, the Stop hook) takes them from here.
"""

from __future__ import annotations

from .memory.note_uploads import NOTES
from .skills.skill_uploads import SKILLS

KINDS = (NOTES, SKILLS)
