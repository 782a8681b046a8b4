"""Settings, read once at start-up from the environment (and `--config FILE [settings]`).

Every variable is optional; the defaults run the gateway on SQLite under ./data.
"""

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    return float(raw) if raw not in (None, "") else default


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    return int(raw) if raw not in (None, "") else default


def _bool(raw: str | None) -> bool | None:
    if not raw:
        return None
    return raw.strip().lower() in ("1", "true", "yes", "on")


def parse_model_limits(raw: str) -> dict[str, tuple[int | None, int | None]]:
    """ "gpt-4o=600/200000, o3=60/" -> {"gpt-4o": (600, 200000), "o3": (60, None)}."""
    out: dict[str, tuple[int | None, int | None]] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        model, sep, rates = item.partition("=")
        rpm, slash, tpm = rates.partition("/")
        try:
            values = tuple(int(v) if v.strip() else None for v in (rpm, tpm))
        except ValueError:
            values = (0, 0)
        if (
            not sep
            or not slash
            or not model.strip()
            or any(v is not None and v < 1 for v in values)
        ):
            raise ValueError(
                f"SWITCHGATE_MODEL_LIMITS: {item.strip()!r} is not MODEL=RPM/TPM "
                "(whole numbers of at least 1; leave a side empty for no limit)"
            )
        out[model.strip()] = (values[0], values[1])
    return out


@dataclass(frozen=True)
class Timeouts:
    """Upstream deadlines (seconds); a channel may override any of them in its
    `timeouts` table (docs/routing.md). A first-byte timeout fails over to the next
    candidate; an idle gap after bytes reached the client ends the stream with an
    error event in the client's dialect."""

    connect: float = 10.0
    # Non-streamed calls: the answer's headers come when the whole answer is ready, so
    # the limit must fit reasoning models that think for minutes.
    first_byte: float = 300.0
    idle: float = 60.0  # between two pieces of a non-streamed body
    # Streamed calls: the first event within 30 s and no gap over 30 s.
    stream_first_byte: float = 30.0
    stream_idle: float = 30.0
    total: float = 900.0

    def for_call(self, stream: bool) -> tuple[float, float, float, float]:
        """(connect, first byte, idle, total) for a streamed or non-streamed call."""
        if stream:
            return self.connect, self.stream_first_byte, self.stream_idle, self.total
        return self.connect, self.first_byte, self.idle, self.total


@dataclass(frozen=True)
class RoutingSettings:
    """Failover and circuit breakers (docs/routing.md)."""

    max_attempts: int = 3  # upstream attempts per call, in total
    short_retry_after: float = 2.0  # a Retry-After up to this retries the same channel once
    breaker_threshold: int = 3  # consecutive failures that open a breaker
    breaker_base_seconds: float = 10.0  # first cool-down (doubles per opening)
    breaker_max_seconds: float = 30.0  # longest cool-down of the ladder
    retry_after_max_seconds: float = 300.0  # longest Retry-After honoured
    # The operator's fallback models are not a process setting but a site setting, so the
    # config file, the console and SWITCHGATE_MODEL_FALLBACKS reach every process alike
    # (routing/fallbacks.py).


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    database_url: str = ""
    redis_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    # How often the server polls the database for changed config (CLI, console).
    config_poll_seconds: float = 1.0
    # How often batched ledger rows and request logs are written.
    flush_seconds: float = 0.5
    # Balance leases (billing/leases.py) expire this long after their last renewal
    # (renewed every sixth of it): the longest a dead process's holds keep money from
    # the user's other requests.
    lease_ttl_seconds: float = 60.0
    max_body_bytes: int = 32 * 1024 * 1024
    # Console forms and the /api management API (413 over it); see console/body_limit.py.
    console_max_body_bytes: int = 1024 * 1024
    # Shutdown (drain.py): after SIGTERM, keep accepting for drain_delay_seconds with
    # /readyz at 503, then stop accepting and give in-flight requests and streams up to
    # drain_seconds to finish before they are cancelled.
    drain_seconds: float = 30.0
    # Requests / tokens per minute per model over every user (SWITCHGATE_MODEL_LIMITS,
    # "MODEL=RPM/TPM,..." with either side empty for none), e.g. an upstream's quota.
    model_limits: Mapping[str, tuple[int | None, int | None]] = field(default_factory=dict)
    drain_delay_seconds: float = 0.0
    # Worst-case output tokens held for a request that sets no max_tokens.
    default_hold_output_tokens: int = 4096
    timeouts: Timeouts = field(default_factory=Timeouts)
    routing: RoutingSettings = field(default_factory=RoutingSettings)
    secret_key: str | None = None  # encrypts channel keys; generated under data_dir if unset
    secret_key_previous: tuple[str, ...] = ()  # old keys, still accepted while rotating
    log_level: str = "info"
    log_format: str = "auto"  # json | text | auto (JSON lines unless stderr is a terminal)
    access_log: bool = True  # one line per relayed request (switchgate.access, INFO)
    # GET /metrics: with a token set, scrapers must send it as a Bearer token;
    # without one, only loopback clients may read it.
    metrics_token: str | None = None
    # HOST:PORT: serve /metrics on this separate address only (404 on the public port).
    metrics_address: str | None = None
    # The console and the sign-in flows.
    public_url: str = ""  # e.g. https://gw.example.com; default: the address the browser used
    # Without public_url, e-mail and OAuth links are built from the request's Host only
    # when it names one of these hosts, a loopback address or the bind address.
    allowed_hosts: tuple[str, ...] = ()
    cookie_secure: bool | None = None  # None: Secure cookies when the request came over https
    admin_email: str | None = None  # the first admin (created at first start if no admin exists)
    admin_password: str | None = None
    # Account-flow limits (sliding windows; a count of 0 turns one off), shared by every
    # process through Redis when redis_url is set: failed sign-ins per e-mail address and
    # per client IP, sign-up attempts per client IP, and verification / password-reset
    # e-mails per address and per client IP.
    signin_limit_per_email: int = 5
    signin_limit_per_ip: int = 30
    signin_limit_window_seconds: float = 900.0
    signup_limit_per_ip: int = 10
    signup_limit_window_seconds: float = 3600.0
    mail_limit_per_email: int = 3
    mail_limit_per_ip: int = 10
    mail_limit_window_seconds: float = 900.0
    # Every SWITCHGATE_* variable by lower-cased suffix: defaults for the site settings the
    # console can change (SMTP, OAuth providers, sign-up), see accounts/site_settings.py.
    site_env: Mapping[str, str] = field(default_factory=dict)

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'switchgate.db').resolve()}"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        """The environment's settings, with the `[settings]` of the config file that
        `serve --config` was given on top (FILE_SETTINGS_VAR)."""
        env = os.environ if env is None else env
        settings = cls._env_only(env)
        from_file = env.get(FILE_SETTINGS_VAR)
        if from_file:
            settings = settings.with_overrides(json.loads(from_file))
        return settings

    @classmethod
    def _env_only(cls, env: Mapping[str, str]) -> "Settings":
        return cls(
            data_dir=Path(env.get("SWITCHGATE_DATA_DIR") or "data"),
            database_url=env.get("SWITCHGATE_DATABASE_URL", ""),
            redis_url=env.get("SWITCHGATE_REDIS_URL") or None,
            host=env.get("SWITCHGATE_HOST", "127.0.0.1"),
            port=_int(env, "SWITCHGATE_PORT", 8080),
            config_poll_seconds=_float(env, "SWITCHGATE_CONFIG_POLL_SECONDS", 1.0),
            flush_seconds=_float(env, "SWITCHGATE_FLUSH_SECONDS", 0.5),
            lease_ttl_seconds=_float(env, "SWITCHGATE_LEASE_TTL_SECONDS", 60.0),
            max_body_bytes=_int(env, "SWITCHGATE_MAX_BODY_BYTES", 32 * 1024 * 1024),
            console_max_body_bytes=_int(env, "SWITCHGATE_CONSOLE_MAX_BODY_BYTES", 1024 * 1024),
            drain_seconds=_float(env, "SWITCHGATE_DRAIN_SECONDS", 30.0),
            model_limits=parse_model_limits(env.get("SWITCHGATE_MODEL_LIMITS", "")),
            drain_delay_seconds=_float(env, "SWITCHGATE_DRAIN_DELAY_SECONDS", 0.0),
            timeouts=Timeouts(
                connect=_float(env, "SWITCHGATE_CONNECT_TIMEOUT", 10.0),
                first_byte=_float(env, "SWITCHGATE_FIRST_BYTE_TIMEOUT", 300.0),
                idle=_float(env, "SWITCHGATE_IDLE_TIMEOUT", 60.0),
                stream_first_byte=_float(env, "SWITCHGATE_STREAM_FIRST_BYTE_TIMEOUT", 30.0),
                stream_idle=_float(env, "SWITCHGATE_STREAM_IDLE_TIMEOUT", 30.0),
                total=_float(env, "SWITCHGATE_TOTAL_TIMEOUT", 900.0),
            ),
            routing=RoutingSettings(
                max_attempts=_int(env, "SWITCHGATE_MAX_ATTEMPTS", 3),
                short_retry_after=_float(env, "SWITCHGATE_SHORT_RETRY_AFTER", 2.0),
                breaker_threshold=_int(env, "SWITCHGATE_BREAKER_THRESHOLD", 3),
                breaker_base_seconds=_float(env, "SWITCHGATE_BREAKER_BASE_SECONDS", 10.0),
                breaker_max_seconds=_float(env, "SWITCHGATE_BREAKER_MAX_SECONDS", 30.0),
                retry_after_max_seconds=_float(env, "SWITCHGATE_RETRY_AFTER_MAX_SECONDS", 300.0),
            ),
            secret_key=env.get("SWITCHGATE_SECRET_KEY") or None,
            secret_key_previous=tuple(
                k.strip()
                for k in env.get("SWITCHGATE_SECRET_KEY_PREVIOUS", "").split(",")
                if k.strip()
            ),
            log_level=env.get("SWITCHGATE_LOG_LEVEL", "info"),
            log_format=env.get("SWITCHGATE_LOG_FORMAT", "auto").strip().lower() or "auto",
            access_log=_bool(env.get("SWITCHGATE_ACCESS_LOG")) is not False,
            metrics_token=env.get("SWITCHGATE_METRICS_TOKEN") or None,
            metrics_address=env.get("SWITCHGATE_METRICS_ADDRESS") or None,
            public_url=env.get("SWITCHGATE_PUBLIC_URL", "").rstrip("/"),
            allowed_hosts=tuple(
                h.strip().lower()
                for h in env.get("SWITCHGATE_ALLOWED_HOSTS", "").split(",")
                if h.strip()
            ),
            cookie_secure=_bool(env.get("SWITCHGATE_COOKIE_SECURE")),
            admin_email=env.get("SWITCHGATE_ADMIN_EMAIL") or None,
            admin_password=env.get("SWITCHGATE_ADMIN_PASSWORD") or None,
            signin_limit_per_email=_int(env, "SWITCHGATE_SIGNIN_LIMIT_PER_EMAIL", 5),
            signin_limit_per_ip=_int(env, "SWITCHGATE_SIGNIN_LIMIT_PER_IP", 30),
            signin_limit_window_seconds=_float(env, "SWITCHGATE_SIGNIN_LIMIT_WINDOW_SECONDS", 900),
            signup_limit_per_ip=_int(env, "SWITCHGATE_SIGNUP_LIMIT_PER_IP", 10),
            signup_limit_window_seconds=_float(env, "SWITCHGATE_SIGNUP_LIMIT_WINDOW_SECONDS", 3600),
            mail_limit_per_email=_int(env, "SWITCHGATE_MAIL_LIMIT_PER_EMAIL", 3),
            mail_limit_per_ip=_int(env, "SWITCHGATE_MAIL_LIMIT_PER_IP", 10),
            mail_limit_window_seconds=_float(env, "SWITCHGATE_MAIL_LIMIT_WINDOW_SECONDS", 900),
            site_env={
                k[len("SWITCHGATE_") :].lower(): v
                for k, v in env.items()
                if k.startswith("SWITCHGATE_") and v != "" and k != FILE_SETTINGS_VAR
            },
        )

    def with_overrides(self, values: Mapping[str, Any]) -> "Settings":
        """Apply a `[settings]` table from a config file (unknown keys are an error)."""
        nested = ("timeouts", "routing", "site_env", "model_limits")  # model_limits: env only
        known = {f for f in self.__dataclass_fields__ if f not in nested}
        unknown = set(values) - known - {"timeouts", "routing"}
        if unknown:
            raise ValueError(f"unknown settings: {', '.join(sorted(unknown))}")
        updates: dict[str, Any] = {k: v for k, v in values.items() if k in known}
        if "data_dir" in updates:
            updates["data_dir"] = Path(updates["data_dir"])
        if "allowed_hosts" in updates:
            updates["allowed_hosts"] = tuple(str(h).lower() for h in updates["allowed_hosts"])
        for name in ("timeouts", "routing"):
            if name in values:
                updates[name] = _nested(name, getattr(self, name), values[name])
        return replace(self, **updates)


def _nested(name: str, current: Any, values: Any) -> Any:
    """`[settings.timeouts]` / `[settings.routing]` over the current values."""
    if not isinstance(values, Mapping):
        raise ValueError(f"[settings.{name}] must be a table")
    unknown = set(values) - set(current.__dataclass_fields__)
    if unknown:
        hint = " (fallback models: a [fallbacks] table)" if "fallbacks" in unknown else ""
        raise ValueError(
            f"unknown settings in [settings.{name}]: {', '.join(sorted(unknown))}{hint}"
        )
    return replace(current, **values)


# `switchgate serve --config FILE` hands the file's [settings] table to the app process
# (uvicorn's workers build their settings from the environment): as JSON in this variable.
FILE_SETTINGS_VAR = "SWITCHGATE_FILE_SETTINGS"
