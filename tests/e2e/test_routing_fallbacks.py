"""Operator-declared fallback models (issue 14 #4), declared where operators declare
everything else: the config file's `[fallbacks]` (applied at start and by `switchgate
config FILE` at run time) and the console's Settings (`PUT /api/settings`). Across
dialects: an OpenAI-kind model falls back to an Anthropic-kind one through the
translators, and the answer's `model` names the model that answered. Clients: the
official OpenAI and Anthropic SDKs. Also: the file's `[settings]` reach the app
process (they did not: uvicorn's worker rebuilt its settings from the environment)."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Gateway
from tests.e2e.console_client import Console
from tests.e2e.routing_support import Upstream, start_gateway, start_upstream
from tests.support import gateway_env, run_cli, wait_for

# (name, kind, path on the fake upstream, model); every *-gpt channel fails (500)
CHANNELS = [
    ("fb-gpt", "openai", "/v1", "fb-gpt"),
    ("fb2-gpt", "openai", "/v1", "fb2-gpt"),
    ("fb3-gpt", "openai", "/v1", "fb3-gpt"),
    ("fb-claude", "anthropic", "", "fb-claude"),
]
MAX_BODY = 4000


def _config(url: str, fallbacks: str) -> str:
    out = [f"[settings]\nmax_body_bytes = {MAX_BODY}\n", fallbacks]
    for name, kind, path, model in CHANNELS:
        out.append(
            f'[[channels]]\nname = "{name}"\nkind = "{kind}"\nbase_url = "{url}{path}"\n'
            f'key = "mock-key"\nmodels = ["{model}"]\n'
            f'[prices."{model}"]\ninput = "1"\noutput = "2"\n'
        )
    return "\n".join(out)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Upstream, str]]:
    tmp = tmp_path_factory.mktemp("fallbacks")
    upstream = start_upstream(tmp)
    upstream.faults(fault_status=500, fault_models=["fb-gpt", "fb2-gpt", "fb3-gpt"])
    config = _config(upstream.url, '[fallbacks]\n"fb-gpt" = ["fb-claude"]\n')
    env = {"SWITCHGATE_ADMIN_EMAIL": ADMIN_EMAIL, "SWITCHGATE_ADMIN_PASSWORD": ADMIN_PASSWORD}
    try:
        gw = start_gateway(tmp_path_factory.mktemp("fallbacks-gw"), config, env)
        try:
            _, token = gw.new_user(balance_usd=5)
            yield gw, upstream, token
        finally:
            gw.process.stop()
    finally:
        upstream.process.stop()


def _oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def _claude(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0, timeout=30)


def _answered_by(gw: Gateway, token: str, model: str) -> list[str]:
    """The `model` of each answer: OpenAI SDK (whole and streamed), Anthropic SDK."""
    messages: Any = [{"role": "user", "content": "hello"}]
    reply = _oai(gw, token).chat.completions.create(model=model, messages=messages)
    assert reply.choices[0].message.content
    out = [reply.model]
    chunks = list(
        _oai(gw, token).chat.completions.create(model=model, messages=messages, stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    out.append(chunks[-1].model)
    message = _claude(gw, token).messages.create(model=model, max_tokens=50, messages=messages)
    assert message.content
    out.append(message.model)
    return out


def test_fallbacks_from_the_config_file_answer_across_dialects(
    setup: tuple[Gateway, Upstream, str],
) -> None:
    gw, upstream, token = setup
    before = upstream.count("fb-claude")
    assert _answered_by(gw, token, "fb-gpt") == ["fb-claude"] * 3
    assert upstream.count("fb-claude") == before + 3


def test_without_a_fallback_the_client_gets_the_error(setup: tuple[Gateway, Upstream, str]) -> None:
    gw, _, token = setup
    with pytest.raises(openai.InternalServerError):
        _oai(gw, token).chat.completions.create(
            model="fb3-gpt", messages=[{"role": "user", "content": "hello"}]
        )


def test_switchgate_config_applies_fallbacks_at_run_time(
    setup: tuple[Gateway, Upstream, str], tmp_path: Path
) -> None:
    gw, _, token = setup
    extra = tmp_path / "more.toml"
    extra.write_text('[fallbacks]\n"fb2-gpt" = ["fb-claude"]\n')
    result = run_cli(gateway_env(gw.data_dir, gw.database_url), "config", str(extra))
    assert "fb-gpt=fb-claude; fb2-gpt=fb-claude" in result.stdout, "merged, model by model"

    def answered() -> bool:
        try:
            return bool(_answered_by(gw, token, "fb2-gpt") == ["fb-claude"] * 3)
        except openai.InternalServerError:
            return False  # not reloaded yet

    assert wait_for(answered, timeout=10)


def test_the_console_sets_fallbacks_and_refuses_bad_ones(
    setup: tuple[Gateway, Upstream, str],
) -> None:
    gw, _, token = setup
    console = Console(gw)
    assert console.signin(ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 303
    items = {i["key"]: i for i in console.ok("GET", "/api/settings")["items"]}
    assert "fb-gpt=fb-claude" in items["model_fallbacks"]["value"]
    bad = console.api("PUT", "/api/settings", {"model_fallbacks": "fb3-gpt"})
    assert bad.status_code == 400 and "MODEL=FALLBACK" in bad.text
    bad = console.api("PUT", "/api/settings", {"model_fallbacks": "fb3-gpt=fb3-gpt"})
    assert bad.status_code == 400 and "itself" in bad.text
    console.ok("PUT", "/api/settings", {"model_fallbacks": "fb3-gpt = fb-claude"})
    try:

        def answered() -> bool:
            try:
                reply = _oai(gw, token).chat.completions.create(
                    model="fb3-gpt", messages=[{"role": "user", "content": "hello"}]
                )
            except openai.InternalServerError:
                return False
            return reply.model == "fb-claude"

        assert wait_for(answered, timeout=10)
        stored = {i["key"]: i for i in console.ok("GET", "/api/settings")["items"]}
        assert stored["model_fallbacks"]["value"] == "fb3-gpt=fb-claude"
        assert stored["model_fallbacks"]["source"] == "console"
    finally:  # the other tests' fallbacks, as the file declared them
        console.ok("PUT", "/api/settings", {"model_fallbacks": "fb-gpt=fb-claude"})


def test_the_config_files_settings_reach_the_app(setup: tuple[Gateway, Upstream, str]) -> None:
    gw, _, token = setup
    body = {"model": "fb-claude", "messages": [{"role": "user", "content": "x" * MAX_BODY}]}
    response = httpx.post(
        f"{gw.url}/v1/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 413, response.text
