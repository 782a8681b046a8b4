"""The aiohttp application, an in-process server handle, and the blocking CLI entry point."""

import asyncio
import contextlib
import sys
from typing import Any, Final

from aiohttp import WSCloseCode, web

from .anthropic import AnthropicMessages
from .bedrock import BedrockRuntime
from .catalog import Catalog
from .cohere import Cohere
from .config import MockConfig
from .control import Control
from .faults import fault_middleware
from .gemini import Gemini
from .google_token import GoogleAccounts
from .openai_chat import OpenAIChat
from .openai_embed import OpenAIEmbeddings
from .openai_media import OpenAIMedia
from .openai_responses import OpenAIResponses
from .presets import PresetModes
from .realtime import Realtime
from .state import MockState
from .vertex import Vertex

STATE: Final = web.AppKey("switchgate_mock_state", MockState)
MAX_BODY: Final = 64 * 1024 * 1024


def _add_routes(app: web.Application, state: MockState) -> None:
    router = app.router
    chat = OpenAIChat(state)
    router.add_post("/v1/chat/completions", chat.chat)
    router.add_post("/v1/completions", chat.completions)
    embed = OpenAIEmbeddings(state)
    router.add_post("/v1/embeddings", embed.embeddings)
    for path in ("/v1/rerank", "/rerank", "/v2/rerank"):
        router.add_post(path, embed.rerank)
    cohere = Cohere(state)
    router.add_post("/v2/chat", cohere.chat)
    router.add_post("/v2/embed", cohere.embed)
    media = OpenAIMedia(state)
    router.add_post("/v1/images/generations", media.generations)
    router.add_post("/v1/images/edits", media.edits)
    router.add_get("/files/{name}", media.file)
    router.add_post("/v1/audio/speech", media.speech)
    router.add_post("/v1/audio/transcriptions", media.transcriptions)
    router.add_post("/v1/audio/translations", media.translations)
    router.add_post("/v1/responses", OpenAIResponses(state).create)
    router.add_get("/v1/realtime", Realtime(state).connect)
    anthropic = AnthropicMessages(state)
    router.add_post("/v1/messages", anthropic.messages)
    router.add_post("/v1/messages/count_tokens", anthropic.count_tokens)
    catalog = Catalog(state)
    gemini = Gemini(state)
    for prefix in ("/v1beta", "/v1"):
        router.add_get(prefix + "/models", catalog.list_models)
        router.add_get(prefix + "/models/{name}", catalog.get_model)
        router.add_post(prefix + "/models/{name}", gemini.action)
    bedrock = BedrockRuntime(state)
    router.add_post("/model/{modelId}/converse", bedrock.converse)
    router.add_post("/model/{modelId}/converse-stream", bedrock.converse_stream)
    router.add_post("/model/{modelId}/invoke", bedrock.invoke)
    presets = PresetModes(state)
    router.add_post("/presets/{vendor}/v1/chat/completions", presets.chat)
    router.add_post("/presets/{vendor}/v1/embeddings", presets.embeddings)
    accounts = GoogleAccounts(state)  # Google's token endpoint and Vertex AI (google_token.py)
    router.add_post("/token", accounts.token)
    router.add_get("/_mock/google/service-accounts", accounts.list)
    router.add_post("/_mock/google/service-accounts", accounts.register)
    router.add_post("/_mock/google/expire-tokens", accounts.expire_tokens)
    router.add_post(
        "/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{name}",
        Vertex(state, accounts).action,
    )
    control = Control(state)
    router.add_get("/_mock/requests", control.requests)
    router.add_delete("/_mock/requests", control.clear)
    router.add_get("/_mock/config", control.get_config)
    router.add_post("/_mock/config", control.set_config)
    router.add_get("/healthz", control.health)


async def _close_websockets(app: web.Application) -> None:
    for ws in list(app[STATE].websockets):
        await ws.close(code=WSCloseCode.GOING_AWAY, message=b"server shutdown")


def create_app(config: MockConfig | None = None) -> web.Application:
    """The fake upstream as an aiohttp application (see the package docstring)."""
    state = MockState(config if config is not None else MockConfig())
    app = web.Application(client_max_size=MAX_BODY, middlewares=[fault_middleware(state)])
    app[STATE] = state
    _add_routes(app, state)
    app.on_shutdown.append(_close_websockets)
    return app


class MockUpstream:
    """A running fake upstream: `base_url`, the live `config`, the recorded `requests`."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, state: MockState) -> None:
        self._runner = runner
        self._state = state
        self.host = host
        self.port = port

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def config(self) -> MockConfig:
        return self._state.config

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Recorded requests, oldest first (auth values redacted)."""
        return self._state.recorded()

    def clear_requests(self) -> None:
        self._state.log.clear()

    async def close(self) -> None:
        await self._runner.cleanup()


async def start_mock_upstream(
    host: str = "127.0.0.1", port: int = 0, config: MockConfig | None = None
) -> MockUpstream:
    """Start the fake upstream on the running loop (port 0 picks a free port)."""
    app = create_app(config)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1] if runner.addresses else port
    return MockUpstream(runner, host, int(bound), app[STATE])


async def _serve(host: str, port: int, config: MockConfig) -> None:
    upstream = await start_mock_upstream(host, port, config)
    sys.stdout.write(
        f"switchgate mock upstream listening on {upstream.base_url} (api key: {config.api_key})\n"
    )
    sys.stdout.flush()
    try:
        await asyncio.Event().wait()
    finally:
        await upstream.close()


def run(host: str, port: int, config: MockConfig | None = None) -> None:
    """Serve until interrupted (the `switchgate mock-upstream` command). Uses uvloop when it
    is installed: it cuts the per-request event-loop overhead noticeably."""
    main = _serve(host, port, config if config is not None else MockConfig())
    with contextlib.suppress(KeyboardInterrupt):
        try:
            import uvloop
        except ImportError:
            asyncio.run(main)
        else:
            uvloop.run(main)
