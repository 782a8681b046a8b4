"""A fake LLM upstream speaking the OpenAI, Anthropic, Gemini and Cohere v2 wire formats
(/work/shared/protocols.md), for tests and benchmarks of the gateway.

It is deliberately independent of `switchgate.dialects` / `switchgate.providers`: it is the test
double they are tested against. Replies are deterministic (see `reply.py`) and steerable with
`[[mock:...]]` directives in the last user text (see `directives.py`):

    error=CODE  latency=MS  chunks=N  interval=MS  drop_after=N  midstream_error[=CODE]
    no_usage  tool  tools=N  cached  cache_write  text=...

Control endpoints: GET/DELETE /_mock/requests, GET/POST /_mock/config, GET /healthz.
"""

from .app import MockUpstream, create_app, run, start_mock_upstream
from .config import MockConfig
from .directives import Directives, parse_directives

__all__ = [
    "Directives",
    "MockConfig",
    "MockUpstream",
    "create_app",
    "parse_directives",
    "run",
    "start_mock_upstream",
]
