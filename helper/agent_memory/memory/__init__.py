"""Notes and checkpoints: their format, projects, the local cache, search, reading and saving."""
