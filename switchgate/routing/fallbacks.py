"""Operator-declared fallback models (docs/routing.md): for a model, other models tried in
order when every channel of it failed or none could take the prompt's length, e.g.
`gpt-5 -> claude-sonnet-4-5` (across dialects, through the translators).

One value, in one place: the site setting `model_fallbacks`, written
`gpt-5=claude-sonnet-4-5,gpt-4.1; o3=gpt-5`. It is set from the config file's
`[fallbacks]` table (`switchgate config FILE`, `serve --config`), from the console's
Settings page (`PUT /api/settings`), or defaults to SWITCHGATE_MODEL_FALLBACKS. Every
process reads it into its catalogue (catalog.py) when the config version changes, so
the hot path only does a dictionary lookup.
"""

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.storage.db import bump_config_version, now_ms
from switchgate.storage.tables import site_settings

SETTING: Final = "model_fallbacks"
Fallbacks = dict[str, tuple[str, ...]]
log = logging.getLogger("switchgate")


def _check(model: str, chain: Sequence[str]) -> tuple[str, ...]:
    if not model or any(c in model for c in "=,;"):
        raise ValueError(f"fallback models: {model!r} is not a model name")
    out: list[str] = []
    for name in chain:
        if not name or any(c in name for c in "=,;"):
            raise ValueError(f"fallback models of {model}: {name!r} is not a model name")
        if name == model:
            raise ValueError(f"fallback models: {model} can't fall back to itself")
        if name not in out:
            out.append(name)
    return tuple(out)


def parse(raw: str) -> Fallbacks:
    """`model=fallback1,fallback2; model2=...` -> {model: (fallback1, fallback2)}.
    ValueError on anything else; an empty list removes the model's fallbacks."""
    out: Fallbacks = {}
    for item in raw.replace("\n", ";").split(";"):
        if not item.strip():
            continue
        model, sep, rest = item.partition("=")
        if not sep:
            raise ValueError(f"fallback models: {item.strip()!r} is not MODEL=FALLBACK1,FALLBACK2")
        chain = [m.strip() for m in rest.split(",") if m.strip()]
        out[model.strip()] = _check(model.strip(), chain)
    return {model: chain for model, chain in out.items() if chain}


def render(fallbacks: Mapping[str, Sequence[str]]) -> str:
    return "; ".join(f"{model}={','.join(chain)}" for model, chain in fallbacks.items() if chain)


def from_table(table: Any) -> Fallbacks:
    """A config file's `[fallbacks]` table: `"gpt-5" = ["claude-sonnet-4-5", "gpt-4.1"]`
    (a single name may be a string; `[]` removes the model's fallbacks)."""
    if not isinstance(table, Mapping):
        raise ValueError('[fallbacks] must be a table of "MODEL" = ["FALLBACK", ...]')
    out: Fallbacks = {}
    for model, chain in table.items():
        names = [chain] if isinstance(chain, str) else chain
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"[fallbacks] {model}: a list of model names")
        out[str(model)] = _check(str(model), [n.strip() for n in names])
    return out


def normalise(raw: str) -> str:
    """A setting's value as stored (checked; ValueError when it is not valid)."""
    return render(parse(raw))


async def stored(conn: AsyncConnection) -> str | None:
    value = await conn.scalar(select(site_settings.c.value).where(site_settings.c.key == SETTING))
    return None if value is None else str(value)


async def load(conn: AsyncConnection, site_env: Mapping[str, str]) -> Fallbacks:
    """The fallbacks in force: the stored setting, else SWITCHGATE_MODEL_FALLBACKS. One
    that does not parse (only possible from the environment) is logged and ignored."""
    raw = await stored(conn)
    if raw is None:
        raw = site_env.get(SETTING, "")
    try:
        return parse(raw)
    except ValueError as exc:
        log.error("ignoring the fallback models: %s", exc)
        return {}


async def apply(conn: AsyncConnection, declared: Mapping[str, Sequence[str]], actor: str) -> str:
    """Merge a config file's `[fallbacks]` into the stored setting, model by model (an
    empty list removes a model's); the result is stored and returned."""
    current = await stored(conn)
    merged = parse(current) if current is not None else {}
    for model, chain in declared.items():
        merged[model] = tuple(chain)
    value = render(merged)
    await conn.execute(delete(site_settings).where(site_settings.c.key == SETTING))
    await conn.execute(
        site_settings.insert().values(
            key=SETTING, value=value, secret=False, updated_at=now_ms(), updated_by=actor
        )
    )
    await bump_config_version(conn)
    return value
