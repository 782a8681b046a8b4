"""The schema. Every timestamp is epoch milliseconds; every amount is integer pico-USD.

Change the schema only with a new Alembic migration in storage/migrations/versions.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("email", String(320), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=True),
    Column("display_name", String(200), nullable=True),
    Column("role", String(16), nullable=False, default="user"),  # user | admin
    Column("status", String(16), nullable=False, default="active"),  # active | disabled
    Column("email_verified", Boolean, nullable=False, default=False),
    # Equals SUM(ledger.amount) for the user, always.
    Column("balance", BigInteger, nullable=False, default=0),
    # Bumped to serialise lease grants (a portable row lock).
    Column("lease_seq", BigInteger, nullable=False, default=0),
    Column("created_at", BigInteger, nullable=False),
    # Requests / tokens per minute over all the user's tokens (NULL: no limit).
    Column("rpm_limit", Integer, nullable=True),
    Column("tpm_limit", Integer, nullable=True),
)

ledger = Table(
    "ledger",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("amount", BigInteger, nullable=False),  # signed: + credit, - charge
    Column("kind", String(16), nullable=False),  # topup | charge | refund | adjust | redeem
    Column("request_id", String(64), nullable=True, unique=True),
    Column("note", Text, nullable=True),
    Column("actor", String(320), nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_ledger_user_created", "user_id", "created_at"),
)

balance_leases = Table(
    "balance_leases",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("holder", String(64), nullable=False),  # one gateway process
    Column("amount", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Index("ux_lease_user_holder", "user_id", "holder", unique=True),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("name", String(200), nullable=False, default=""),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("key_prefix", String(16), nullable=False),
    Column("status", String(16), nullable=False, default="active"),  # active|disabled|deleted
    Column("expires_at", BigInteger, nullable=True),
    Column("quota_limit", BigInteger, nullable=True),
    Column("quota_used", BigInteger, nullable=False, default=0),
    Column("allowed_models", Text, nullable=True),  # JSON list
    Column("allowed_ips", Text, nullable=True),  # JSON list of IPs / CIDRs
    Column("rpm_limit", Integer, nullable=True),
    Column("tpm_limit", Integer, nullable=True),  # input + output tokens per minute
    Column("created_at", BigInteger, nullable=False),
    Column("last_used_at", BigInteger, nullable=True),
    Index("ix_tokens_user", "user_id"),
)

channels = Table(
    "channels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("kind", String(32), nullable=False),
    Column("base_url", String(2000), nullable=False),
    Column("api_key_enc", Text, nullable=False),  # AES-GCM, see storage/secrets.py
    Column("models", Text, nullable=False),  # JSON list of model names clients use
    Column("model_map", Text, nullable=False, default="{}"),  # JSON {alias: upstream}
    Column("priority", Integer, nullable=False, default=0),
    Column("weight", Integer, nullable=False, default=1),
    Column("status", String(16), nullable=False, default="enabled"),
    Column("extra", Text, nullable=False, default="{}"),  # JSON: headers, api_version
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)

# Every API key of a channel (migration 0005); position 0 is also in channels.api_key_enc.
channel_keys = Table(
    "channel_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("channel_id", Integer, ForeignKey("channels.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("key_enc", Text, nullable=False),  # AES-GCM, see storage/secrets.py
    Column("weight", Integer, nullable=False, default=1),
    Column("status", String(16), nullable=False, default="enabled"),
    Column("disabled_reason", Text, nullable=True),  # e.g. "HTTP 401: invalid api key"
    Column("disabled_at", BigInteger, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("max_concurrency", Integer, nullable=True),  # migration 0012; NULL: no cap
    Column("rpm", Integer, nullable=True),  # sends in any 60 s; NULL: no cap
    UniqueConstraint("channel_id", "position", name="uq_channel_keys_position"),
)

prices = Table(
    "prices",
    metadata,
    Column("model", String(200), primary_key=True),
    Column("kind", String(16), nullable=False, default="chat"),
    # Units (pico-USD) per single token.
    Column("input", BigInteger, nullable=False, default=0),
    Column("output", BigInteger, nullable=False, default=0),
    Column("cache_read", BigInteger, nullable=True),
    Column("cache_write", BigInteger, nullable=True),
    # Units per request, added to every successful call.
    Column("per_request", BigInteger, nullable=False, default=0),
    Column("extra", Text, nullable=False, default="{}"),  # JSON: other unit prices
    Column("updated_at", BigInteger, nullable=False),
    # NULL: the operator's own price; "catalogue:<date>": imported from the catalogue.
    Column("source", String(64), nullable=True),
)

request_logs = Table(
    "request_logs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("request_id", String(64), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("user_id", Integer, nullable=True),
    Column("token_id", Integer, nullable=True),
    Column("model", String(200), nullable=True),
    Column("upstream_model", String(200), nullable=True),
    Column("channel_id", Integer, nullable=True),
    Column("dialect", String(32), nullable=False),
    Column("endpoint", String(64), nullable=False),
    Column("stream", Boolean, nullable=False, default=False),
    Column("status", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("cache_read_tokens", Integer, nullable=False, default=0),
    Column("cache_write_tokens", Integer, nullable=False, default=0),
    Column("reasoning_tokens", Integer, nullable=False, default=0),
    Column("usage_estimated", Boolean, nullable=False, default=False),
    Column("cost", BigInteger, nullable=False, default=0),
    Column("latency_ms", Integer, nullable=False, default=0),
    Column("ttft_ms", Integer, nullable=True),
    Column("client_ip", String(64), nullable=True),
    Column("error", Text, nullable=True),
    # Requests sent upstream for this call, failovers and retries included (migration 0008).
    Column("upstream_attempts", SmallInteger, nullable=False, default=0, server_default="0"),
    Index("ix_logs_user_created", "user_id", "created_at"),
    Index("ix_logs_created", "created_at"),
    Index("ix_logs_request_id", "request_id"),  # migration 0008
)

kv = Table(
    "kv",
    metadata,
    Column("key", String(100), primary_key=True),
    Column("value", Text, nullable=False),
)

# --- accounts and console (migration 0002) ---

sessions = Table(
    "sessions",
    metadata,
    # SHA-256 of the cookie value; the cookie itself is never stored.
    Column("id", String(64), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("csrf", String(64), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("ip", String(64), nullable=True),
    Column("user_agent", String(300), nullable=True),
    # The per-session playground token (an ordinary token, encrypted with the secret box).
    Column("playground_token_id", Integer, nullable=True),
    Column("playground_token_enc", Text, nullable=True),
    Index("ix_sessions_user", "user_id"),
)

oauth_identities = Table(
    "oauth_identities",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("provider", String(32), nullable=False),  # github | google
    Column("subject", String(255), nullable=False),  # the provider's stable user id
    Column("email", String(320), nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Index("ux_oauth_provider_subject", "provider", "subject", unique=True),
    Index("ix_oauth_user", "user_id"),
)

email_tokens = Table(
    "email_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("purpose", String(16), nullable=False),  # verify | reset
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("used_at", BigInteger, nullable=True),
)

redemption_codes = Table(
    "redemption_codes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("batch", String(64), nullable=False),
    Column("code_hash", String(64), nullable=False, unique=True),
    Column("code_enc", Text, nullable=False),  # the code, encrypted (for CSV export)
    Column("amount", BigInteger, nullable=False),
    Column("status", String(16), nullable=False, default="unused"),  # unused|used|disabled
    Column("note", Text, nullable=True),
    Column("created_by", String(320), nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("used_by", Integer, nullable=True),
    Column("used_at", BigInteger, nullable=True),
    Index("ix_redemption_batch", "batch"),
)

site_settings = Table(
    "site_settings",
    metadata,
    Column("key", String(100), primary_key=True),
    Column("value", Text, nullable=False),  # secrets: encrypted with the secret box
    Column("secret", Boolean, nullable=False, default=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("updated_by", String(320), nullable=True),
)

# Responses API store (`POST /v1/responses` with store != false): the Response object the
# client received and the whole conversation (input items + output items, Responses JSON),
# so `previous_response_id` can continue it, and the input items apart (with ids, for
# listing). Scoped to the user.
responses = Table(
    "responses",
    metadata,
    Column("id", String(100), primary_key=True),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("model", String(200), nullable=False),
    Column("passthrough", Boolean, nullable=False, default=False),
    Column("response", Text, nullable=False),  # JSON: the Response object
    Column("conversation", Text, nullable=False),  # JSON: list of Responses items
    # JSON: the input items as `GET /v1/responses/{id}/input_items` lists them (full
    # context, each with an `id`); NULL for rows written before migration 0004.
    Column("input_items", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Index("ix_responses_user_created", "user_id", "created_at"),
)

# Charges the recorder could not write (migration 0006): one row per request whose charge
# failed alone, so an operator can see and settle it by hand. No foreign keys: the row
# must be writable whatever made the charge fail. `cost` is decimal text (exact, even
# for an amount no 64-bit column holds).
failed_charges = Table(
    "failed_charges",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("request_id", String(64), nullable=False),
    Column("user_id", Integer, nullable=True),
    Column("token_id", Integer, nullable=True),
    Column("cost", Text, nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),  # when the request arrived
    Column("failed_at", BigInteger, nullable=False),
    Index("ix_failed_charges_failed", "failed_at"),
)

# Admin actions (switchgate/audit): append-only, the database refuses UPDATE and DELETE
# (triggers from migration 0007).
audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", BigInteger, nullable=False),
    Column("actor", String(320), nullable=False),  # e-mail address, or "cli"
    Column("actor_id", Integer, nullable=True),
    Column("action", String(64), nullable=False),
    Column("target", String(200), nullable=False),
    Column("detail", Text, nullable=True),  # JSON, secrets masked
    Column("ip", String(64), nullable=True),
    Index("ix_audit_log_created", "created_at"),
)

# --- admin dashboard rollups (migration 0008) ---

# Requests, errors (>= 400 but not 499), stopped (499), tokens and spend per UTC hour,
# user, model ('' when none) and channel (0 when none); one row per group.
usage_hourly = Table(
    "usage_hourly",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("hour", BigInteger, nullable=False),  # epoch ms of the hour's start
    Column("user_id", Integer, nullable=False),
    Column("model", String(200), nullable=False),
    Column("channel_id", Integer, nullable=False),
    Column("requests", Integer, nullable=False),
    Column("errors", Integer, nullable=False),
    Column("stopped", Integer, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cost", BigInteger, nullable=False),
    Index("ix_usage_hourly_hour", "hour"),
)

# A histogram per hour, model and channel of successful requests' latency and time to
# first token (metric latency | ttft; bucket: console/rollup.py BUCKETS_MS).
latency_hourly = Table(
    "latency_hourly",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("hour", BigInteger, nullable=False),
    Column("model", String(200), nullable=False),
    Column("channel_id", Integer, nullable=False),
    Column("metric", String(8), nullable=False),
    Column("bucket", Integer, nullable=False),
    Column("count", Integer, nullable=False),
    Index("ix_latency_hourly_hour", "hour"),
)

# The hours already summarised (each exactly once: the key makes a racing second
# summary of the same hour fail and roll back).
rollup_hours = Table(
    "rollup_hours",
    metadata,
    Column("hour", BigInteger, primary_key=True, autoincrement=False),
    Column("rolled_at", BigInteger, nullable=False),
)
