"""Scripted tool round-trips: `[[mock:call=NAME]]` (and `[[mock:args={...}]]`) in the last
user text make the fake model call the tool NAME with those arguments (JSON object; by
default sample values that fit the tool's schema), the way a real model would; once the
tool's result comes back it answers in text (`Tool result received: ...`, see reply.py).
This is how tests drive a real coding agent through one tool call and its final answer.
"""

import hashlib

from switchgate import jsonutil

from .directives import Directives
from .reply import Ask, ToolCall, sample_args


def scripted_calls(ask: Ask, d: Directives) -> list[ToolCall]:
    """The scripted call, or none: after the tool's result, or when the request doesn't
    offer a tool of that name (the model then just talks, so the test sees it)."""
    if d.call is None or ask.tool_results is not None:
        return []
    schema = next((s for name, s in ask.tools if name == d.call), None)
    if schema is None and d.call not in (name for name, _ in ask.tools):
        return []
    args = sample_args(schema)
    if d.args is not None:
        try:
            parsed = jsonutil.loads(d.args)
        except jsonutil.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            args = parsed
    seed = hashlib.blake2b(ask.last_user_text.encode(), digest_size=11).hexdigest()
    return [ToolCall(f"{seed}s0", d.call, args, jsonutil.dumps_str(args))]
