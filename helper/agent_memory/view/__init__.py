"""`agent-memory view`: a static, read-only site of what the agents remember on this machine."""
