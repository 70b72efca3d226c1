"""This machine across commands: the uploads waiting here (every kind), its status, and what the agents' hooks do at
session start (a reminder) and after each turn (a retry of what waits)."""
