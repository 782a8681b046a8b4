"""Token usage in one canonical convention.

`input_tokens` is the WHOLE prompt, cache reads and writes included (OpenAI's
`prompt_tokens`); `output_tokens` is the whole output, reasoning included.
Translators convert to each dialect's convention (e.g. A's `input_tokens`
excludes cache reads and writes).
"""

import logging
from dataclasses import dataclass
from typing import Any, Final

log = logging.getLogger("switchgate.usage")

# The most tokens of one kind an upstream may report for one call. Larger (or negative)
# numbers are rejected as absurd: no model reads or writes that much in one call, and the
# request log's token columns are 32-bit.
MAX_REPORTED_TOKENS: Final = 100_000_000


def reported_count(value: Any, name: str) -> int:
    """A token count as an upstream reported it, or 0 (= not reported) when it is not a
    count: not an integer, negative, or above MAX_REPORTED_TOKENS. Rejected numbers are
    logged; the relay then counts what was delivered with the tokenizer instead (and marks
    the usage estimated), so a bogus number can neither credit a user nor poison a charge."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    if 0 <= value <= MAX_REPORTED_TOKENS:
        return value
    log.warning("rejected usage %s=%d from the upstream; the tokenizer counts instead", name, value)
    return 0


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    # True when counted by the gateway's tokenizer because the upstream didn't say.
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)
