"""What a rate limit check is asked and answers; shared by the memory and Redis limiters.

Fixed one-minute windows. A request is admitted when, for every `Rate` that applies to it,
the window's request count is below `requests` and its token count below `tokens`; only
then is it counted, on every request counter at once (a request refused by one limit uses
up none of the others). Tokens are counted when the answer is known (input + output, via
the recorder), so a tokens-per-minute limit can be overshot by the requests admitted
while it still had room, never by a request admitted after it ran out.
"""

from dataclasses import dataclass
from typing import Literal

WINDOW_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Rate:
    key: str  # "t:<token id>" or "u:<user id>"
    requests: int | None  # per minute; None: no limit
    tokens: int | None


@dataclass(frozen=True, slots=True)
class Refusal:
    rate: Rate
    unit: Literal["requests", "tokens"]
    wait: int  # seconds until the window resets


def window_of(now: float) -> int:
    return int(now // WINDOW_SECONDS)


def wait_after(now: float) -> int:
    return max(1, int((window_of(now) + 1) * WINDOW_SECONDS - now))
