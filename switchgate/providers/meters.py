"""The machinery shared by the passthrough usage meters: cheap per chunk, exact at the end.

Per chunk a meter only runs C-level searches: `SSEBlockSplitter` finds where the last
complete event ends, and a regular expression tells whether the block may carry usage.
Only such blocks are JSON-decoded (now, or lazily when usage is asked for); the rest are
kept as they are until `output_text()` needs them, which it rarely does (the relay only
counts tokens itself when the upstream reported no usage). Once the kept bytes pass
`RETAIN_LIMIT` the meter reads them and from then on reads text as it goes, so memory per
stream stays about the generated text plus `RETAIN_LIMIT`.

The results are those of reading every event as it arrives: `usage_pattern` must match
every block in which `_take_usage` could record something (false alarms only cost time).
"""

import re
from typing import Any, ClassVar, Final

from switchgate.jsonutil import JSONDecodeError, loads
from switchgate.wire.sse_blocks import SSEBlockSplitter, parse_block

RETAIN_LIMIT: Final = 256 * 1024


def usage_key_pattern(*keys: str) -> re.Pattern[bytes]:
    """Matches a JSON key of `keys` unless `null` follows it on the same line (OpenAI
    streams carry `"usage":null` in every chunk).

    Exact for valid JSON: a key can't span lines, and within a line JSON whitespace is only
    spaces and tabs. Whatever else follows - an object, a line break into the next `data:`
    line of a multi-line event - counts as a possible usage (a false alarm only costs
    time). A key spelled with `\\u` escapes is not recognised.
    """
    names = b"|".join(re.escape(key.encode()) for key in keys)
    return re.compile(rb'"(?:' + names + rb')"[ \t]*(?::[ \t]*[^n \t]|[^: \t])')


class BlockMeter:
    """Base of the passthrough meters. Subclasses set `usage_pattern` and implement
    `_take_usage` / `_take_text` over one decoded event (a JSON object).

    With `last_usage_wins` (the usage is whatever the last event carrying one said),
    blocks that may hold usage are only decoded when usage is asked for, latest first,
    stopping at the first that has one. Otherwise they are decoded as they come.
    """

    usage_pattern: ClassVar[re.Pattern[bytes]]
    last_usage_wins: ClassVar[bool] = False

    def __init__(self) -> None:
        self._splitter = SSEBlockSplitter()
        self._kept: list[bytes] = []  # blocks whose text has not been read
        self._kept_bytes = 0
        self._unread_usage: list[bytes] = []  # last_usage_wins: kept blocks not yet read
        self._eager = False
        self._text: list[str] = []

    def feed(self, data: bytes) -> None:
        block = self._splitter.feed(data)
        if not block:
            return
        maybe_usage = self.usage_pattern.search(block) is not None
        if self._eager:
            self._read(block, maybe_usage, self._text)
            return
        self._kept.append(block)
        self._kept_bytes += len(block)
        if maybe_usage:
            if self.last_usage_wins:
                self._unread_usage.append(block)
            else:
                self._read(block, True, None)
        if self._kept_bytes > RETAIN_LIMIT:
            self._eager = True
            self._read_kept()

    @property
    def retained_bytes(self) -> int:
        """Bytes of complete events kept unread (at most `RETAIN_LIMIT`)."""
        return self._kept_bytes

    @property
    def eager(self) -> bool:
        """Whether the meter now reads text as it goes (it kept too much)."""
        return self._eager

    def _collected_text(self) -> str:
        self._read_kept()
        if len(self._text) > 1:
            self._text = ["".join(self._text)]
        return self._text[0] if self._text else ""

    def _resolve_usage(self) -> None:
        """last_usage_wins: read the unread blocks that may hold usage, latest first."""
        blocks, self._unread_usage = self._unread_usage, []
        for block in reversed(blocks):
            if self._read(block, True, None):
                return

    def _read_kept(self) -> None:
        self._resolve_usage()
        blocks, self._kept, self._kept_bytes = self._kept, [], 0
        for block in blocks:
            self._read(block, False, self._text)

    def _read(self, block: bytes, usage: bool, text: list[str] | None) -> bool:
        """Decode the events of `block`; True if one of them recorded usage."""
        found = False
        for event in parse_block(block):
            if event.data == "[DONE]":
                continue
            try:
                payload = loads(event.data)
            except JSONDecodeError:
                continue
            if not isinstance(payload, dict):
                continue
            if usage and self._take_usage(event.event, payload):
                found = True
            if text is not None:
                self._take_text(event.event, payload, text)
        return found

    def usage_final(self) -> bool:
        """Whether the usage read is the final count (see providers.base.UsageMeter).
        True here: OpenAI streams report usage once, at the end, and Gemini's every
        usageMetadata is the running total so far."""
        return True

    def _take_usage(self, event: str | None, payload: dict[str, Any]) -> bool:
        """Record the usage `payload` carries, if any; True if it did."""
        raise NotImplementedError

    def _take_text(self, event: str | None, payload: dict[str, Any], out: list[str]) -> None:
        """Append the generated text `payload` carries to `out`."""
        raise NotImplementedError
