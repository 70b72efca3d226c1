"""The real-runtime harness itself: the scripted model servers, and the real CLIs driven by them."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

import tools
from agent_clis import CLIS
from model_servers import AnthropicModel, ResponsesModel, Say, Shell

SKILL_DESCRIPTION = "Answers questions about the harness smoke test; use it when asked about quokkas."


def post(url: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def sse_data(stream: str) -> list[dict]:
    return [json.loads(line[len("data: ") :]) for line in stream.splitlines() if line.startswith("data: ")]


def test_anthropic_stand_in_streams_the_script_and_records_what_it_could_not_play():
    with AnthropicModel([Shell("echo hi"), Say("done")]) as model:
        bash = {"name": "Bash", "input_schema": {}}
        status, stream = post(f"{model.url}/v1/messages?beta=true", {"stream": True, "tools": [bash], "messages": []})
        assert status == 200
        events = sse_data(stream)
        assert [e["type"] for e in events][0] == "message_start" and events[-1]["type"] == "message_stop"
        assert events[1]["content_block"]["name"] == "Bash"
        assert json.loads(events[2]["delta"]["partial_json"]) == {"command": "echo hi"}
        assert events[-2]["delta"]["stop_reason"] == "tool_use"

        result = {"type": "tool_result", "tool_use_id": events[1]["content_block"]["id"], "content": "hi\n"}
        status, stream = post(
            f"{model.url}/v1/messages", {"stream": True, "messages": [{"role": "user", "content": [result]}]}
        )
        assert status == 200 and sse_data(stream)[2]["delta"] == {"type": "text_delta", "text": "done"}
        assert [(r.command, r.output, r.is_error) for r in model.tool_results()] == [("echo hi", "hi\n", False)]
        model.assert_played()

        assert post(f"{model.url}/v1/messages", {"stream": False})[0] == 404
        assert post(f"{model.url}/v1/complete", {"stream": True})[0] == 404
        assert post(f"{model.url}/v1/messages", {"stream": True})[0] == 200  # the script is exhausted
        assert len(model.requests) == 5 and len(model.unplayed) == 3
        with pytest.raises(AssertionError, match="not a streaming request"):
            model.assert_played()


def test_responses_stand_in_refuses_a_shell_step_when_no_shell_tool_is_offered():
    with ResponsesModel([Shell("echo hi")]) as model:
        # Codex's default model gets "code mode" with no exec_command function: the step cannot be played (X9)
        status, stream = post(f"{model.url}/v1/responses", {"stream": True, "tools": [], "input": []})
        assert status == 200 and sse_data(stream)[-1]["type"] == "response.completed"
        assert model.unplayed == ["request 0: no shell tool offered for 'echo hi'"]
        assert model.remaining == [Shell("echo hi")]

        status, stream = post(
            f"{model.url}/v1/responses", {"stream": True, "tools": [{"type": "function", "name": "exec_command"}]}
        )
        item = sse_data(stream)[1]["item"]
        assert (item["type"], item["name"]) == ("function_call", "exec_command")
        assert json.loads(item["arguments"])["cmd"] == "echo hi"
        with pytest.raises(AssertionError, match="no result came back"):
            model.assert_played()


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["codex", "claude"])
def test_real_cli_runs_a_scripted_command_and_lists_a_placed_skill(runtime, machine, tmp_path):
    cli_class = CLIS[runtime]
    skill_root = machine.home / ".agents" / "skills" if runtime == "codex" else machine.home / ".claude" / "skills"
    (skill_root / "quokka-facts").mkdir(parents=True)
    (skill_root / "quokka-facts" / "SKILL.md").write_text(
        f"---\nname: quokka-facts\ndescription: {SKILL_DESCRIPTION}\n---\n\n# Quokka facts\n"
    )
    target = tmp_path / "written by the agent.txt"
    with cli_class.model_class([Shell(f"printf 'from %s' {runtime} > '{target}'"), Say("All done.")]) as model:
        run = cli_class(machine, model).run("Write the file, please.")

        assert target.read_text() == f"from {runtime}"
        model.assert_played()
        assert len(model.requests) == 2
        first = model.text(0)
        assert "quokka-facts" in first and SKILL_DESCRIPTION in first
        assert "Write the file, please." in first
        assert model.tool_results()[0].is_error is False
    tools.exited(run)
    assert ("All done." in json.loads(run.out)["result"]) if runtime == "claude" else run.out.strip() == "All done."
