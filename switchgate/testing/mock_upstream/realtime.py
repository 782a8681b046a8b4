"""OpenAI Realtime over WebSocket (`GET /v1/realtime?model=M`, protocols §2.8): text only.

GA event names by default; `OpenAI-Beta: realtime=v1` selects the beta names. The key comes as
`Authorization: Bearer KEY` or the subprotocol `openai-insecure-api-key.KEY`. With input
transcription on, each committed audio buffer is also transcribed (realtime_transcription.py)."""

import base64
import binascii
from typing import Any

from aiohttp import WSMsgType, web

from switchgate import jsonutil

from .auth import bearer_ok
from .directives import parse_directives
from .errors import openai_error
from .httpkit import pause
from .realtime_transcription import transcription_events
from .reply import Ask, Plan, content_text, count_words, plan_reply, split_text
from .state import MockState

_TEXT_TYPES = ("input_text", "text", "output_text")
AUDIO_BYTES_PER_TOKEN = 4_800  # pcm16 at 24 kHz: 10 audio tokens per second


class _Session:
    """One connection: its session settings, conversation items and input audio."""

    def __init__(
        self, request: web.Request, ws: web.WebSocketResponse, state: MockState, beta: bool
    ) -> None:
        self.ws, self.state, self.beta = ws, state, beta
        self.transport = request.transport
        model = request.query.get("model", "gpt-realtime")
        self.items: list[dict[str, Any]] = []
        self.audio_bytes = 0  # appended in the whole session (the responses' audio input)
        self.buffered = 0  # appended since the last commit or clear
        self.serial = 0
        number = state.next_id()
        self.session: dict[str, Any] = {
            "id": f"sess_mock{number}",
            "object": "realtime.session",
            "model": model,
            "instructions": "",
            "tools": [],
            "tool_choice": "auto",
            "max_output_tokens": "inf",
        }
        if beta:
            self.session |= {
                "modalities": ["text", "audio"],
                "voice": "alloy",
                "input_audio_format": "pcm16",
                "output_audio_format": "pcm16",
            }
        else:
            self.session |= {
                "type": "realtime",
                "output_modalities": ["audio"],
                "audio": {
                    "input": {"format": {"type": "audio/pcm", "rate": 24000}},
                    "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "alloy"},
                },
            }

    def _next(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}_mock{self.serial}"

    async def send(self, kind: str, **fields: Any) -> None:
        event = {"type": kind, "event_id": self._next("event"), **fields}
        await self.ws.send_str(jsonutil.dumps_str(event))

    async def error(self, message: str, code: str, event_id: Any = None) -> None:
        await self.send(
            "error",
            error={
                "type": "invalid_request_error",
                "code": code,
                "message": message,
                "param": None,
                "event_id": event_id,
            },
        )

    async def add_item(self, item: dict[str, Any]) -> None:
        item = {"object": "realtime.item", **item}
        item["id"] = item.get("id") or self._next("item")
        previous = self.items[-1]["id"] if self.items else None
        self.items.append(item)
        if self.beta:
            await self.send("conversation.item.created", previous_item_id=previous, item=item)
        else:
            await self.send("conversation.item.added", previous_item_id=previous, item=item)
            await self.send("conversation.item.done", previous_item_id=previous, item=item)

    async def run(self) -> None:
        await self.send("session.created", session=self.session)
        async for msg in self.ws:
            if msg.type != WSMsgType.TEXT:
                continue
            try:
                event = jsonutil.loads(msg.data)
            except jsonutil.JSONDecodeError:
                await self.error("Invalid JSON.", "invalid_json")
                continue
            if isinstance(event, dict):
                await self.dispatch(event)

    async def dispatch(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "session.update" and isinstance(event.get("session"), dict):
            self.session |= event["session"]
            await self.send("session.updated", session=self.session)
        elif kind == "conversation.item.create" and isinstance(event.get("item"), dict):
            await self.add_item(event["item"])
        elif kind == "input_audio_buffer.append":
            try:
                size = len(base64.b64decode(str(event.get("audio", ""))))
            except (binascii.Error, ValueError):
                await self.error("Invalid base64 audio.", "invalid_value", event.get("event_id"))
            else:
                self.audio_bytes += size
                self.buffered += size
        elif kind == "input_audio_buffer.commit":
            item_id, committed, self.buffered = self._next("item"), self.buffered, 0
            await self.send(
                "input_audio_buffer.committed",
                item_id=item_id,
                previous_item_id=self.items[-1]["id"] if self.items else None,
            )
            await self.add_item(
                {
                    "id": item_id,
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_audio", "transcript": None}],
                }
            )
            await self.transcribe(item_id, committed)
        elif kind == "input_audio_buffer.clear":
            self.audio_bytes = self.buffered = 0
            await self.send("input_audio_buffer.cleared")
        elif kind == "response.create":
            options = event.get("response")
            await self.respond(options if isinstance(options, dict) else {})
        elif kind != "response.cancel":
            await self.error(
                f"Unsupported event type: {kind}", "unknown_event", event.get("event_id")
            )

    async def transcribe(self, item_id: str, audio_bytes: int) -> None:
        config = self.state.config
        events = transcription_events(
            self.session, item_id, audio_bytes, config.reply_text, config.chunk_count
        )
        for kind, fields in events:
            if "transcript" in fields:
                self.items[-1]["content"][0]["transcript"] = fields["transcript"]
            await self.send(kind, **fields)

    def ask(self, options: dict[str, Any]) -> Ask:
        ask = Ask()
        words = count_words(str(options.get("instructions") or self.session.get("instructions")))
        results: list[str] = []
        for item in self.items:
            if item.get("type") == "function_call_output":
                results.append(str(item.get("output", "")))
                words += count_words(results[-1])
                continue
            results = []
            text = content_text(item.get("content"), _TEXT_TYPES)
            words += count_words(text)
            if text and item.get("role") == "user":
                ask.last_user_text = text
        ask.prompt_words = words
        ask.tool_results = results or None
        for tool in options.get("tools") or self.session.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name"):
                ask.tools.append((str(tool["name"]), tool.get("parameters")))
        choice = options.get("tool_choice", self.session.get("tool_choice"))
        ask.tool_required = choice == "required"
        ask.tool_disabled = choice == "none"
        if isinstance(choice, dict) and isinstance(choice.get("name"), str):
            ask.tool_forced = choice["name"]
        return ask

    def usage(self, plan: Plan) -> dict[str, Any]:
        audio = self.audio_bytes // AUDIO_BYTES_PER_TOKEN
        inputs = plan.prompt_tokens + audio
        return {
            "total_tokens": inputs + plan.completion_tokens,
            "input_tokens": inputs,
            "output_tokens": plan.completion_tokens,
            "input_token_details": {
                "cached_tokens": plan.cached_tokens,
                "text_tokens": plan.prompt_tokens,
                "audio_tokens": audio,
                "image_tokens": 0,
                "cached_tokens_details": {
                    "text_tokens": plan.cached_tokens,
                    "audio_tokens": 0,
                    "image_tokens": 0,
                },
            },
            "output_token_details": {"text_tokens": plan.completion_tokens, "audio_tokens": 0},
        }

    def _events(self, rid: str, plan: Plan) -> tuple[list[tuple[str, dict[str, Any]]], list[Any]]:
        events: list[tuple[str, dict[str, Any]]] = []
        output: list[dict[str, Any]] = []
        text_delta = "response.text.delta" if self.beta else "response.output_text.delta"
        text_done = "response.text.done" if self.beta else "response.output_text.done"
        part_type = "text" if self.beta else "output_text"
        if plan.text or not plan.tool_calls:
            iid = self._next("item")
            part = {"type": part_type, "text": plan.text}
            item = {
                "id": iid,
                "object": "realtime.item",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
            }
            at = {"response_id": rid, "item_id": iid, "output_index": 0, "content_index": 0}
            events.append(
                (
                    "response.output_item.added",
                    {
                        "response_id": rid,
                        "output_index": 0,
                        "item": {**item, "status": "in_progress", "content": []},
                    },
                )
            )
            events.append(("response.content_part.added", {**at, "part": {**part, "text": ""}}))
            events += [(text_delta, {**at, "delta": p}) for p in split_text(plan.text, plan.chunks)]
            events.append((text_done, {**at, "text": plan.text}))
            events.append(("response.content_part.done", {**at, "part": part}))
            events.append(
                ("response.output_item.done", {"response_id": rid, "output_index": 0, "item": item})
            )
            output.append(item)
        for call in plan.tool_calls:
            index, iid = len(output), self._next("item")
            item = {
                "id": iid,
                "object": "realtime.item",
                "type": "function_call",
                "status": "completed",
                "call_id": "call_" + call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
            at = {
                "response_id": rid,
                "item_id": iid,
                "output_index": index,
                "call_id": item["call_id"],
            }
            events.append(
                (
                    "response.output_item.added",
                    {
                        "response_id": rid,
                        "output_index": index,
                        "item": {**item, "status": "in_progress", "arguments": ""},
                    },
                )
            )
            events += [
                ("response.function_call_arguments.delta", {**at, "delta": p})
                for p in split_text(call.arguments, 3)
            ]
            events.append(
                (
                    "response.function_call_arguments.done",
                    {**at, "name": call.name, "arguments": call.arguments},
                )
            )
            events.append(
                (
                    "response.output_item.done",
                    {"response_id": rid, "output_index": index, "item": item},
                )
            )
            output.append(item)
        return events, output

    async def respond(self, options: dict[str, Any]) -> None:
        ask = self.ask(options)
        d = parse_directives(ask.last_user_text)
        config = self.state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            await self.send(
                "error",
                error={
                    "type": "server_error" if d.error >= 500 else "invalid_request_error",
                    "code": str(d.error),
                    "message": f"Mock error {d.error}.",
                    "param": None,
                    "event_id": None,
                },
            )
            return
        plan = plan_reply(ask, d, config)
        rid = self._next("resp")
        base = {
            "object": "realtime.response",
            "id": rid,
            "status_details": None,
            "conversation_id": "conv_mock",
            "output_modalities": ["text"],
        }
        events, output = self._events(rid, plan)
        if d.midstream_error is not None:
            events = events[: max(1, len(events) // 2)]
        interval = d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms
        await self.send(
            "response.created",
            response={**base, "status": "in_progress", "output": [], "usage": None},
        )
        for i, (kind, fields) in enumerate(events):
            if d.drop_after is not None and i >= d.drop_after:
                if self.transport is not None:
                    self.transport.close()
                return
            await pause(interval)
            await self.send(kind, **fields)
        if d.midstream_error is not None:
            await self.send(
                "error",
                error={
                    "type": "server_error",
                    "code": "server_error",
                    "message": "Mock mid-stream failure.",
                    "param": None,
                    "event_id": None,
                },
            )
            return
        self.items += output
        usage = None if d.no_usage else self.usage(plan)
        status = "incomplete" if plan.truncated else "completed"
        await self.send(
            "response.done", response={**base, "status": status, "output": output, "usage": usage}
        )


class Realtime:
    def __init__(self, state: MockState) -> None:
        self.state = state

    async def connect(self, request: web.Request) -> web.StreamResponse:
        self.state.record(request, 0)
        offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",")]
        keys = self.state.config.accepted
        insecure = {"openai-insecure-api-key." + k for k in keys}
        if not (bearer_ok(request, keys) or insecure.intersection(offered)):
            return openai_error(401)
        beta = "realtime=v1" in request.headers.get("OpenAI-Beta", "")
        ws = web.WebSocketResponse(protocols=("realtime",) if "realtime" in offered else ())
        await ws.prepare(request)
        self.state.websockets.add(ws)
        try:
            await _Session(request, ws, self.state, beta).run()
        finally:
            self.state.websockets.discard(ws)
        return ws
