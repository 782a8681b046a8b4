"""Control endpoints: `/_mock/requests` (GET, DELETE), `/_mock/config` (GET, POST), `/healthz`."""

from aiohttp import web

from .config import update_config
from .httpkit import NOT_JSON, json_response, parse_json
from .state import MockState


class Control:
    def __init__(self, state: MockState) -> None:
        self.state = state

    async def requests(self, request: web.Request) -> web.StreamResponse:
        return json_response({"requests": self.state.recorded()})

    async def clear(self, request: web.Request) -> web.StreamResponse:
        count = len(self.state.log)
        self.state.log.clear()
        return json_response({"cleared": count})

    async def get_config(self, request: web.Request) -> web.StreamResponse:
        return json_response({"config": self.state.config.as_dict()})

    async def set_config(self, request: web.Request) -> web.StreamResponse:
        body = parse_json(await request.read())
        if body is NOT_JSON or not isinstance(body, dict):
            return json_response({"error": "expected a JSON object of MockConfig fields"}, 400)
        try:
            update_config(self.state.config, body)
        except ValueError as exc:
            return json_response({"error": str(exc)}, 400)
        self.state.resize_log()
        return json_response({"config": self.state.config.as_dict()})

    async def health(self, request: web.Request) -> web.StreamResponse:
        return json_response({"status": "ok"})
