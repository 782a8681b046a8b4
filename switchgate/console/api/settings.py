"""Admin: site settings (sign-up, SMTP, OAuth providers); secrets are write-only."""

from typing import Any

from sqlalchemy import select
from starlette.requests import Request

from switchgate.accounts import site_settings
from switchgate.accounts.mail import MailError, SmtpConfig, send_mail
from switchgate.console.api.registry import STR, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, base_url, gw, json_body
from switchgate.storage.tables import site_settings as table


async def get_settings(request: Request, actor: Actor) -> dict[str, Any]:
    state = gw(request)
    async with state.db.connect() as conn:
        site = await site_settings.load(conn, state.box, state.settings.site_env)
        stored = set((await conn.execute(select(table.c.key))).scalars())
    env = state.settings.site_env
    items = []
    for spec in site_settings.SPECS:
        value = site.get(spec.key)
        source = "console" if spec.key in stored else "env" if spec.key in env else "default"
        items.append(
            {
                "key": spec.key,
                "label": spec.label,
                "secret": spec.secret,
                "choices": list(spec.choices),
                "value": "" if spec.secret else value,
                "is_set": bool(value),
                "source": source,
            }
        )
    callback = base_url(request) + "/console/oauth/{provider}/callback"
    return {"items": items, "oauth_callback": callback}


async def put_settings(request: Request, actor: Actor) -> dict[str, Any]:
    body = await json_body(request)
    changes = {k: (None if v is None else str(v)) for k, v in body.items()}
    state = gw(request)
    async with state.db.begin() as conn:
        await site_settings.save(conn, state.box, changes, actor.email)
    return {"ok": True}


async def test_mail(request: Request, actor: Actor) -> dict[str, Any]:
    state = gw(request)
    to = str((await json_body(request)).get("to") or actor.email)
    async with state.db.connect() as conn:
        site = await site_settings.load(conn, state.box, state.settings.site_env)
    config = SmtpConfig.from_site(site)
    if config is None:
        raise ApiError(400, "set an SMTP host first", "invalid")
    try:
        await send_mail(config, to, "switchgate test mail", "SMTP works.\n")
    except MailError as exc:
        raise ApiError(502, str(exc), "mail") from exc
    return {"ok": True}


ROUTES = [
    ApiRoute("GET", "/api/settings", get_settings, "Site settings", "settings", True),
    ApiRoute(
        "PUT",
        "/api/settings",
        put_settings,
        "Change settings: {key: value}; null (or an empty secret) goes back to the default",
        "settings",
        True,
        body={"type": "object", "additionalProperties": {"type": ["string", "null"]}},
    ),
    ApiRoute(
        "POST",
        "/api/settings/test-mail",
        test_mail,
        "Send a test e-mail",
        "settings",
        True,
        body=obj(to=STR),
    ),
]
