"""Issue 20 #8: the console API and forms take small bodies only (413, nothing buffered
past the limit); the relay keeps its own, larger limit."""

import httpx

from tests.conftest import Gateway
from tests.e2e.console_client import signed_in


def test_a_huge_json_body_is_refused_before_it_is_read(gateway: Gateway) -> None:
    console = signed_in(gateway)
    big = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    headers = {"x-csrf-token": console.csrf or "", "content-type": "application/json"}
    answer = console.http.post("/api/tokens", content=big, headers=headers)
    assert answer.status_code == 413, answer.text
    assert answer.json()["error"]["code"] == "too_large"

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(40):
            yield b"x" * 65536

    streamed = console.http.post("/api/tokens", content=chunks(), headers=headers)
    assert streamed.status_code == 413
    form = httpx.post(f"{gateway.url}/console/signin", content=b"a=" + b"b" * 2_000_000)
    assert form.status_code == 413
    # Small bodies are untouched.
    created = console.api("POST", "/api/tokens", {"name": "fine"})
    assert created.status_code == 200, created.text
