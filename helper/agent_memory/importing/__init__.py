"""The import of other tools' memory (Claude Code, Codex, Cline, Markdown folders) into notes: where each keeps it,
which files are read, and the run that saves them."""
