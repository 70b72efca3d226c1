"""Scripted stand-ins for the model APIs the real agent CLIs talk to, so that the CLIs run offline in tests.

`AnthropicModel` serves the Anthropic Messages API that Claude Code calls (`ANTHROPIC_BASE_URL`, `POST
/v1/messages?beta=true`); `ResponsesModel` serves the OpenAI Responses API that Codex calls through a model
provider with `wire_api = "responses"` (`POST /v1/responses`). Both stream server-sent events.

A script is a list of steps, one per model request: `Shell(command)` answers with a tool call that runs the
command in the runtime's shell, `Say(text)` with a final message that ends the turn. Every request is kept
whole (`requests`), and so is every request the server could not answer as scripted (`unplayed`): a CLI that
drops a tool call it does not understand still exits 0 (pitfall X8), so tests assert on effects and on these
records, never on a clean exit alone.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Shell:
    """A tool call that runs `command` in the runtime's own shell.

    `tokens` is the input size the response reports: a nearly full context window makes the runtime compact.
    `action`, if given, runs in the test process just before this step is served (say, to end a fault).
    """

    command: str
    tokens: int = 100
    action: Callable[[], object] | None = None


@dataclass(frozen=True)
class Say:
    """A final assistant message: the turn ends (`tokens` and `action` as for `Shell`)."""

    text: str
    tokens: int = 100
    action: Callable[[], object] | None = None


Step = Shell | Say


@dataclass(frozen=True)
class ToolResult:
    """What the runtime sent back to the model for one of our tool calls."""

    command: str
    output: str
    is_error: bool


def visible_text(value: Any) -> str:
    """Every string inside a request body, one per line (what the model was shown, without JSON escaping)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(visible_text(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(visible_text(v) for v in value)
    return ""


class ScriptedModel:
    """A model API stand-in on 127.0.0.1 at a random port, answering requests with the scripted steps in order."""

    path = ""  # the one route the CLI calls

    def __init__(self, steps: Iterable[Step] = ()) -> None:
        self._steps: list[Step] = list(steps)
        self._lock = threading.Lock()
        self._calls: dict[str, str] = {}  # tool call id -> command
        self.requests: list[dict[str, Any]] = []
        self.unplayed: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=type(self).__name__, daemon=True)

    # -- life cycle and script ---------------------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The server root, `http://127.0.0.1:PORT`."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *steps: Step) -> None:
        """Append steps: the next requests get them, in order."""
        with self._lock:
            self._steps.extend(steps)

    @property
    def remaining(self) -> list[Step]:
        """The steps no request has taken yet."""
        with self._lock:
            return list(self._steps)

    # -- what the model saw ------------------------------------------------------------------------------

    def text(self, index: int) -> str:
        """All text of request `index` (negative counts from the end)."""
        return visible_text(self.requests[index])

    def tool_results(self) -> list[ToolResult]:
        """The runtime's answer to each scripted tool call, in order, from the requests that carried them."""
        found: dict[str, ToolResult] = {}
        for body in self.requests:
            for call_id, output, is_error in self._results_in(body):
                if call_id in self._calls:
                    found[call_id] = ToolResult(self._calls[call_id], output, is_error)
        return [found[call_id] for call_id in self._calls if call_id in found]

    def assert_played(self) -> None:
        """Fail unless every request got its scripted step and every scripted step was taken."""
        problems = list(self.unplayed) + [f"step never requested: {step}" for step in self.remaining]
        calls_without_result = set(self._calls) - {r for b in self.requests for r, *_ in self._results_in(b)}
        problems += [f"no result came back for tool call {self._calls[c]!r}" for c in sorted(calls_without_result)]
        assert not problems, "the scripted model was not played as written:\n" + "\n".join(problems)

    # -- per-API parts ----------------------------------------------------------------------------------

    def _offers_shell(self, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    def _results_in(self, body: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
        raise NotImplementedError

    def _events(self, body: dict[str, Any], step: Step, number: int) -> Iterator[tuple[str, dict[str, Any]]]:
        raise NotImplementedError

    # -- serving ----------------------------------------------------------------------------------------

    def _answer(self, route: str, body: Any) -> list[tuple[str, dict[str, Any]]] | None:
        """The events for one request, or None (recorded as unplayed) when it cannot be answered as scripted."""
        with self._lock:
            number = len(self.requests)
            self.requests.append(body if isinstance(body, dict) else {"unparsed": body})
            if route != self.path:
                self.unplayed.append(f"request {number}: unexpected route {route}")
                return None
            if not isinstance(body, dict) or body.get("stream") is not True:
                self.unplayed.append(f"request {number}: not a streaming request")
                return None
            if not self._steps:
                self.unplayed.append(f"request {number}: the script has no step left")
                return list(self._events(body, Say("(the scripted model has nothing more to say)"), number))
            step = self._steps[0]
            if isinstance(step, Shell) and not self._offers_shell(body):
                self.unplayed.append(f"request {number}: no shell tool offered for {step.command!r}")
                return list(self._events(body, Say("(no shell tool was offered)"), number))
            self._steps.pop(0)
            if isinstance(step, Shell):
                self._calls[self._call_id(number)] = step.command
            if step.action is not None:
                step.action()
            return list(self._events(body, step, number))

    def _call_id(self, number: int) -> str:
        return f"call_scripted_{number:03d}"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:
                model._answer(urlsplit(self.path).path, {"method": "GET", "path": self.path})
                self.send_error(404)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", errors="replace")
                events = model._answer(urlsplit(self.path).path, body)
                if events is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event, data in events:
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


class AnthropicModel(ScriptedModel):
    """The Anthropic Messages API, as Claude Code calls it; shell steps become `Bash` tool calls."""

    path = "/v1/messages"

    def _offers_shell(self, body: dict[str, Any]) -> bool:
        return any(tool.get("name") == "Bash" for tool in body.get("tools") or [])

    def _results_in(self, body: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
        for message in body.get("messages") or []:
            if message.get("role") != "user" or not isinstance(message.get("content"), list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    yield block.get("tool_use_id", ""), visible_text(block.get("content")), bool(block.get("is_error"))

    def _events(self, body: dict[str, Any], step: Step, number: int) -> Iterator[tuple[str, dict[str, Any]]]:
        message = {
            "id": f"msg_scripted_{number:03d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "scripted"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": step.tokens, "output_tokens": 1},
        }
        yield "message_start", {"type": "message_start", "message": message}
        if isinstance(step, Shell):
            block = {"type": "tool_use", "id": self._call_id(number), "name": "Bash", "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps({"command": step.command})}
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
            stop_reason = "end_turn"
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": 0}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 10},
            },
        )
        yield "message_stop", {"type": "message_stop"}


class ResponsesModel(ScriptedModel):
    """The OpenAI Responses API, as Codex calls it; shell steps become `exec_command` function calls.

    Codex offers `exec_command` as a classic function tool only for a model it has no metadata for (X9: run it
    with `-m gpt-5.1`); its default model gets "code mode" instead, which this stand-in does not script.
    """

    path = "/v1/responses"

    def _offers_shell(self, body: dict[str, Any]) -> bool:
        return any(tool.get("name") == "exec_command" for tool in body.get("tools") or [])

    def _results_in(self, body: dict[str, Any]) -> Iterator[tuple[str, str, bool]]:
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                output = item.get("output")
                yield item.get("call_id", ""), visible_text(output), "Process exited with code 0" not in str(output)

    def _events(self, body: dict[str, Any], step: Step, number: int) -> Iterator[tuple[str, dict[str, Any]]]:
        response_id = f"resp_scripted_{number:03d}"
        yield "response.created", {"type": "response.created", "response": {"id": response_id}}
        if isinstance(step, Shell):
            # no `login` argument, as real models send it: the command gets Codex's login shell (X6)
            arguments = json.dumps({"cmd": step.command, "yield_time_ms": 30000})
            item = {
                "type": "function_call",
                "id": f"fc_scripted_{number:03d}",
                "call_id": self._call_id(number),
                "name": "exec_command",
                "arguments": arguments,
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_scripted_{number:03d}",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step.text}],
            }
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
        usage = {
            "input_tokens": step.tokens,
            "input_tokens_details": None,
            "output_tokens": 10,
            "output_tokens_details": None,
            "total_tokens": step.tokens + 10,
        }
        yield "response.completed", {"type": "response.completed", "response": {"id": response_id, "usage": usage}}


class ConsolidatingModel(ResponsesModel):
    """A Responses model for Codex with its memories on: the requests of Codex's memory consolidation (its Phase 2
    agent, which a session start spawns in the background when the memory folder changed) take the steps of
    `consolidation`, kept whole in `consolidation_requests`; every other request takes the main script. Which of
    the two sessions asks first is up to Codex."""

    MARK = "Memory Writing Agent: Phase 2"  # the first line of Codex 0.169.0's consolidation prompt

    def __init__(self, steps: Iterable[Step] = (), consolidation: Iterable[Step] = ()) -> None:
        super().__init__(steps)
        self._other: list[Step] = list(consolidation)
        self._route = threading.Lock()
        self.consolidation_requests: list[dict[str, Any]] = []

    def _answer(self, route: str, body: Any) -> list[tuple[str, dict[str, Any]]] | None:
        consolidating = isinstance(body, dict) and self.MARK in visible_text(body.get("input"))
        with self._route:  # one request at a time swaps the scripts
            if consolidating:
                self.consolidation_requests.append(body)
                self._steps, self._other = self._other, self._steps
            try:
                return super()._answer(route, body)
            finally:
                if consolidating:
                    self._steps, self._other = self._other, self._steps

    @property
    def consolidation_remaining(self) -> list[Step]:
        """The consolidation's steps no request has taken yet."""
        with self._route:
            return list(self._other)
