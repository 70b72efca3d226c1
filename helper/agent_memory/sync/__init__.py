"""Two-way sync of the runtimes' own memory (Claude Code's auto memory, Codex's memories) through the bucket."""
