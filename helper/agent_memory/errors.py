"""The one user-facing error type and the exit codes that are part of the command contract."""

from __future__ import annotations

OK = 0
ERROR = 1
USAGE = 2
NOT_SET_UP = 3
ACCESS = 4
REFUSED = 5
PENDING = 75


class AgentMemoryError(Exception):
    """An error meant for the user: a message, the next command to run (or one precise action), an exit code.

    `next_step` is required: an error that does not say how to get past it leaves the user, or the agent, stuck.
    """

    exit_code = ERROR

    def __init__(self, message: str, *, next_step: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.next_step = next_step
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(AgentMemoryError):
    """Invalid arguments or input values."""

    exit_code = USAGE


class NotSetUp(AgentMemoryError):
    """No bucket configured, or the directory is not mapped to a project."""

    exit_code = NOT_SET_UP


class AccessError(AgentMemoryError):
    """Authentication failed, or the bucket is missing, public or not accessible."""

    exit_code = ACCESS


class ContentRefused(AgentMemoryError):
    """A note or skill whose content we refuse to store or install."""

    exit_code = REFUSED


def render(message: str, next_step: str) -> str:
    """The two lines every error is told in, everywhere: `Error: what happened.` and `Next: what fixes it`."""
    return f"Error: {message}\nNext: {next_step}"
