"""What the agents' hooks do: the reminder at session start (and the checkpoint after a compaction), the retry of
waiting uploads after each turn, and the pull and push of the runtimes' own memory when sync is on."""
