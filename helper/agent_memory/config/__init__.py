"""The machine's configuration (which bucket, which folders map to which projects) and the `Context` each command
resolves from it."""
