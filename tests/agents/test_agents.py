"""Every coding agent on every channel kind: Claude Code, Codex CLI and Gemini CLI (the
real CLIs, pinned in conftest.py) x OpenAI, Anthropic and Gemini channels backed by the
strict fake upstream. Each pair finishes a plain turn (the reply is printed) and a turn
with a real tool round-trip: the fake model calls the agent's own file-reading tool
(scripted.py), the agent runs it, sends the result back, and prints the final answer,
which quotes the file. Plus Codex on an OpenAI channel that serves /responses natively,
and Codex calling a function of a `namespace` tool (multi_agent_v1) on translated
channels. See docs/agents.md.
"""

import json
import subprocess
from typing import Final

import pytest

from tests.agents.conftest import MODELS, RESPONSES_MODEL, AgentRun

pytestmark = pytest.mark.timeout(900)  # the first test may install the agents
AGENTS: Final = ("claude", "codex", "gemini")
KINDS: Final = ("openai", "anthropic", "gemini")
SECRET: Final = "PELICAN-7319"


def _tool_prompt(agent: str, path: str) -> str:
    """The agent's own tool for reading a file, as the scripted fake model calls it."""
    call = {
        "claude": ("Read", {"file_path": path}),
        "codex": ("exec_command", {"cmd": f"cat {path}"}),
        "gemini": ("read_file", {"file_path": path}),
    }[agent]
    return f"Read the note. [[mock:call={call[0]}]] [[mock:args={json.dumps(call[1])}]]"


def _check(agents: AgentRun, done: "subprocess.CompletedProcess[str]", expected: str) -> None:
    report = f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, report
    assert expected in done.stdout, report
    assert agents.failed_requests() == [], report  # no side call failed along the way


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("agent", AGENTS)
def test_one_turn(agents: AgentRun, agent: str, kind: str) -> None:
    word = f"ZEBRA-{agent}-{kind}"
    done = agents.run(agent, MODELS[kind], f"Say the word. [[mock:text={word}]]")
    _check(agents, done, word)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("agent", AGENTS)
def test_tool_round_trip(agents: AgentRun, agent: str, kind: str) -> None:
    note = agents.work / "note.txt"
    note.write_text(f"the password is {SECRET}\n")
    done = agents.run(agent, MODELS[kind], _tool_prompt(agent, str(note)))
    _check(agents, done, SECRET)  # only the file has it: the tool ran and its result came back


def test_codex_on_a_native_responses_channel(agents: AgentRun) -> None:
    done = agents.run("codex", RESPONSES_MODEL, "Say the word. [[mock:text=NATIVE-RESPONSES]]")
    _check(agents, done, "NATIVE-RESPONSES")
    note = agents.work / "note.txt"
    note.write_text(f"the password is {SECRET}\n")
    _check(agents, agents.run("codex", RESPONSES_MODEL, _tool_prompt("codex", str(note))), SECRET)


@pytest.mark.parametrize("kind", ["anthropic", "gemini"])
def test_codex_namespaced_tool_call(agents: AgentRun, kind: str) -> None:
    """The fake model calls `close_agent` of Codex's `multi_agent_v1` namespace; the gateway
    hands it back as {"name": "close_agent", "namespace": "multi_agent_v1"}, so Codex runs
    its own handler (which answers about the unknown agent id) instead of reporting an
    unsupported call."""
    args = json.dumps({"target": "no-such-agent"})
    prompt = f"Close it. [[mock:call=close_agent]] [[mock:args={args}]]"
    done = agents.run("codex", MODELS[kind], prompt)
    _check(agents, done, "Tool result received:")
    assert "invalid agent id" in done.stdout, done.stdout  # its multi-agent handler ran
