"""Token usage in one canonical convention.

`input_tokens` is the WHOLE prompt, cache reads and writes included (OpenAI's
`prompt_tokens`); `output_tokens` is the whole output, reasoning included.
Translators convert to each dialect's convention (e.g. A's `input_tokens`
excludes cache reads and writes).
"""

from dataclasses import dataclass


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
