"""agent-memory: portable memory and skills for personal coding agents."""

__version__ = "0.1.0"
