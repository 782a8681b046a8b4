"""Site settings the console changes at run time (sign-up, SMTP, OAuth providers, the
fallback models of routing/fallbacks.py).

Each value comes from the `site_settings` table when an admin set it there, else from
the environment (`SWITCHGATE_<KEY>`, e.g. SWITCHGATE_SMTP_HOST), else from its default.
Secrets are stored encrypted with the secret box and never sent back to a browser.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.routing import fallbacks
from switchgate.storage.db import bump_config_version, now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import site_settings


@dataclass(frozen=True)
class SettingSpec:
    key: str
    label: str
    default: str = ""
    secret: bool = False
    choices: tuple[str, ...] = ()


SPECS: Final = (
    SettingSpec("signup", "New accounts may sign up", "open", choices=("open", "closed")),
    SettingSpec(
        "require_verification",
        "E-mail must be verified before password sign-in (when SMTP is set)",
        "true",
        choices=("true", "false"),
    ),
    SettingSpec(
        "pricing_page",
        "Public pricing page (/console/pricing, no sign-in needed)",
        "on",
        choices=("on", "off"),
    ),
    SettingSpec("smtp_host", "SMTP host"),
    SettingSpec("smtp_port", "SMTP port", "25"),
    SettingSpec("smtp_security", "SMTP security", "none", choices=("none", "starttls", "tls")),
    SettingSpec("smtp_user", "SMTP user name"),
    SettingSpec("smtp_password", "SMTP password", secret=True),
    SettingSpec("smtp_from", "Sender address", "switchgate@localhost"),
    SettingSpec("github_client_id", "GitHub client id"),
    SettingSpec("github_client_secret", "GitHub client secret", secret=True),
    SettingSpec(
        "github_authorize_url",
        "GitHub authorize URL",
        "https://github.com/login/oauth/authorize",
    ),
    SettingSpec(
        "github_token_url", "GitHub token URL", "https://github.com/login/oauth/access_token"
    ),
    SettingSpec("github_api_url", "GitHub API URL", "https://api.github.com"),
    SettingSpec("google_client_id", "Google client id"),
    SettingSpec("google_client_secret", "Google client secret", secret=True),
    SettingSpec("google_issuer", "Google issuer (OpenID discovery)", "https://accounts.google.com"),
    SettingSpec(
        fallbacks.SETTING,
        "Fallback models, tried in order when every channel of a model fails or none can"
        " take the prompt's length: MODEL=FALLBACK1,FALLBACK2; MODEL2=... (docs/routing.md)",
    ),
)
BY_KEY: Final = {spec.key: spec for spec in SPECS}


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class SiteSettings:
    values: Mapping[str, str]

    def get(self, key: str) -> str:
        return self.values.get(key, BY_KEY[key].default)

    def flag(self, key: str) -> bool:
        return self.get(key).strip().lower() in ("true", "1", "yes", "on", "open")

    @property
    def signup_open(self) -> bool:
        return self.get("signup") == "open"

    @property
    def smtp_configured(self) -> bool:
        return bool(self.get("smtp_host"))

    def provider_configured(self, provider: str) -> bool:
        return bool(self.get(f"{provider}_client_id") and self.get(f"{provider}_client_secret"))


async def load(conn: AsyncConnection, box: SecretBox, env: Mapping[str, str]) -> SiteSettings:
    values = {spec.key: env[spec.key] for spec in SPECS if spec.key in env}
    for row in await conn.execute(select(site_settings)):
        if row.key in BY_KEY:
            values[row.key] = box.decrypt(row.value) if row.secret else row.value
    return SiteSettings(values)


async def save(
    conn: AsyncConnection,
    box: SecretBox,
    changes: Mapping[str, str | None],
    actor: str,
) -> None:
    """Store each change; None (or "" for a secret) removes the stored value, so the
    environment's value or the default applies again."""
    for key, given in changes.items():
        value = given
        spec = BY_KEY.get(key)
        if spec is None:
            raise SettingsError(f"unknown setting {key!r}")
        if value is not None and spec.choices and value not in spec.choices:
            raise SettingsError(f"{key} must be one of: {', '.join(spec.choices)}")
        if key == "smtp_port" and value and not value.isdigit():
            raise SettingsError("smtp_port must be a number")
        if key == fallbacks.SETTING:
            if value is not None:
                value = fallbacks.normalise(value)
            await bump_config_version(conn)  # every process reloads its catalogue
        await conn.execute(delete(site_settings).where(site_settings.c.key == key))
        if value is None or (spec.secret and value == ""):
            continue
        stored = box.encrypt(value) if spec.secret else value
        await conn.execute(
            site_settings.insert().values(
                key=key, value=stored, secret=spec.secret, updated_at=now_ms(), updated_by=actor
            )
        )


async def set_value(conn: AsyncConnection, key: str, value: str) -> None:
    """An internal, non-secret value (e.g. the first-start hint), outside SPECS."""
    result = await conn.execute(
        update(site_settings)
        .where(site_settings.c.key == key)
        .values(value=value, updated_at=now_ms())
    )
    if result.rowcount == 0:
        await conn.execute(
            site_settings.insert().values(key=key, value=value, secret=False, updated_at=now_ms())
        )


async def get_value(conn: AsyncConnection, key: str) -> str | None:
    value = await conn.scalar(select(site_settings.c.value).where(site_settings.c.key == key))
    return None if value is None else str(value)


async def delete_value(conn: AsyncConnection, key: str) -> None:
    await conn.execute(delete(site_settings).where(site_settings.c.key == key))
