"""Setting a machine up: bootstrap, the managed block in instruction files, and the Space's setup commands."""
