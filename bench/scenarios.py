"""Benchmark scenarios and the exact HTTP request each target receives for them."""

import json
from dataclasses import dataclass
from typing import Any

from bench.targets import MODELS

SYSTEM = "You are a helpful assistant."
SMALL_PROMPT = "Say hello in one short sentence."
# ~100k cl100k tokens ("hello", " world" are one token each): a ~600 kB request body.
LARGE_PROMPT = "hello world " * 50_000

PASS_EVENTS = 22  # 20 content chunks + the usage chunk + [DONE]
PACED_EVENTS = 52  # 50 content chunks + the usage chunk + [DONE]


@dataclass(frozen=True)
class Scenario:
    name: str
    group: str
    client: str  # the client's dialect: openai | anthropic | gemini
    model: str
    stream: bool
    concurrency: int
    large: bool = False
    workers: int = 1
    expect_events: int | None = None  # checked for pass-through streams
    min_duration: float = 0.0  # paced streams need time to finish a few rounds

    @property
    def upstream_kind(self) -> str:
        return MODELS[self.model][0]

    @property
    def passthrough(self) -> bool:
        return self.client == self.upstream_kind


def _pass(stream: bool, latency: int, c: int) -> Scenario:
    name = f"pass-{'stream' if stream else 'whole'}-l{latency}-c{c}"
    return Scenario(
        name,
        "pass-through",
        "openai",
        f"gpt-l{latency}",
        stream,
        c,
        expect_events=PASS_EVENTS if stream else None,
    )


def all_scenarios() -> list[Scenario]:
    out: list[Scenario] = []
    for latency in (0, 50):
        for stream in (False, True):
            out += [_pass(stream, latency, c) for c in (1, 16, 64, 256)]
    paths = (
        ("messages-to-openai", "anthropic", "gpt-l0"),
        ("openai-to-anthropic", "openai", "claude-l0"),
        ("gemini-to-openai", "gemini", "gpt-l0"),
    )
    for label, client, model in paths:
        for stream in (False, True):
            for c in (1, 64):
                name = f"{label}-{'stream' if stream else 'whole'}-c{c}"
                out.append(Scenario(name, "translated", client, model, stream, c))
    for c in (1, 16):
        out.append(
            Scenario(f"large-prompt-c{c}", "large prompt", "openai", "gpt-l0", False, c, True)
        )
    for stream in (False, True):
        base = _pass(stream, 0, 64)
        out.append(
            Scenario(
                base.name + "-2w",
                "two workers",
                "openai",
                "gpt-l0",
                stream,
                64,
                workers=2,
                expect_events=base.expect_events,
            )
        )
    # Last: 1,000 streams can leave a gateway's workers busy (or restarting) for a while.
    out.append(
        Scenario(
            "paced-1000-streams",
            "long-lived streams",
            "openai",
            "gpt-paced",
            True,
            1000,
            workers=2,
            expect_events=PACED_EVENTS,
            min_duration=4.0,
        )
    )
    return out


QUICK = {
    "pass-whole-l0-c1",
    "pass-whole-l0-c64",
    "pass-stream-l0-c1",
    "pass-stream-l0-c64",
    "pass-whole-l50-c64",
    "messages-to-openai-whole-c64",
    "openai-to-anthropic-stream-c64",
    "gemini-to-openai-whole-c64",
    "large-prompt-c1",
    "paced-1000-streams",
}


# ---------------------------------------------------------------- request bodies


def _openai_body(s: Scenario, prompt: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": s.model,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        "max_tokens": 64,
        "temperature": 0.7,
    }
    if s.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _anthropic_body(s: Scenario, prompt: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": s.model,
        "max_tokens": 64,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0.7,
    }
    if s.stream:
        body["stream"] = True
    return body


def _gemini_body(prompt: str) -> dict[str, Any]:
    return {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "contents": [{"role": "user", "parts": [{"text": prompt}]}],
        "generationConfig": {"maxOutputTokens": 64, "temperature": 0.7},
    }


def _http(path: str, headers: dict[str, str], body: dict[str, Any]) -> bytes:
    data = json.dumps(body, separators=(",", ":")).encode()
    head = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", "content-type: application/json"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    head.append(f"content-length: {len(data)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def request_bytes(s: Scenario, *, direct: bool, token: str) -> bytes:
    """The request a client sends: to the fake upstream in the upstream's own dialect
    (direct), or to a gateway in the scenario's client dialect."""
    prompt = LARGE_PROMPT if s.large else SMALL_PROMPT
    if direct:
        kind, prefix = MODELS[s.model]
        if kind == "openai":
            return _http(f"{prefix}/v1/chat/completions", {}, _openai_body(s, prompt))
        return _http(f"{prefix}/v1/messages", {}, _anthropic_body(s, prompt))
    if s.client == "openai":
        return _http(
            "/v1/chat/completions", {"authorization": f"Bearer {token}"}, _openai_body(s, prompt)
        )
    if s.client == "anthropic":
        headers = {"x-api-key": token, "anthropic-version": "2023-06-01"}
        return _http("/v1/messages", headers, _anthropic_body(s, prompt))
    action = "streamGenerateContent?alt=sse" if s.stream else "generateContent"
    return _http(
        f"/v1beta/models/{s.model}:{action}", {"x-goog-api-key": token}, _gemini_body(prompt)
    )
