"""`switchgate serve`: migrate, apply --config, then run uvicorn (uvloop + httptools)."""

import asyncio
import contextlib
import json
import logging
import math
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import uvicorn

from switchgate.accounts.bootstrap import ensure_admin
from switchgate.cli.config_file import apply_config, read_config
from switchgate.cli.worker_tuning import tune_worker
from switchgate.observability.logs import configure_logging
from switchgate.settings import FILE_SETTINGS_VAR, Settings
from switchgate.storage import migrate
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox

if TYPE_CHECKING:
    from switchgate.app import GatewayApp


async def _prepare(settings: Settings, config: dict[str, object] | None) -> None:
    db = Database(settings.resolved_database_url())
    try:
        await migrate.upgrade(db)
        await ensure_admin(db, settings)
        if config:
            for line in await apply_config(
                db,
                SecretBox.load(
                    settings.secret_key, settings.data_dir, settings.secret_key_previous
                ),
                config,
            ):
                logging.getLogger("switchgate").info(line)
    finally:
        await db.dispose()


def serve(
    settings: Settings,
    *,
    host: str | None = None,
    port: int | None = None,
    config: Path | None = None,
    workers: int = 1,
) -> int:
    configure_logging(settings)
    parsed = read_config(config) if config else None
    if parsed and "settings" in parsed:
        settings = settings.with_overrides(parsed["settings"])
        # the app (each uvicorn worker) builds its settings from the environment
        os.environ[FILE_SETTINGS_VAR] = json.dumps(parsed["settings"], default=str)
    host = host or settings.host
    port = port or settings.port
    asyncio.run(_prepare(settings, parsed))
    # Workers are separate processes that build their settings from the environment.
    os.environ["SWITCHGATE_DATA_DIR"] = str(settings.data_dir)
    os.environ["SWITCHGATE_DATABASE_URL"] = settings.resolved_database_url()
    os.environ["SWITCHGATE_SKIP_MIGRATIONS"] = "1"
    database = _safe(settings.resolved_database_url())
    print(f"switchgate listening on http://{host}:{port} (database: {database})", flush=True)
    options: dict[str, Any] = {
        "factory": True,
        "host": host,
        "port": port,
        "loop": "uvloop",
        "http": "httptools",
        "lifespan": "on",
        "access_log": False,
        "log_config": None,  # uvicorn's loggers go to ours (observability/logs.py)
        "log_level": settings.log_level,
        "timeout_graceful_shutdown": max(1, math.ceil(settings.drain_seconds)),
    }
    if workers > 1:
        # The supervisor passes SIGTERM to every worker, waits for them, and exits 0.
        with metrics_directory():
            uvicorn.run("switchgate.cli.serve:worker_app", workers=workers, **options)
        return 0
    server = _Server(uvicorn.Config("switchgate.cli.serve:worker_app", **options))
    server.run()
    return 0 if server.started else 3


class _Server(uvicorn.Server):
    """uvicorn's server, except that SIGTERM is an ordinary, requested stop: after the
    drain the process exits 0 instead of re-raising the signal (which exits 143)."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM:
            self.should_exit = True
        else:
            super().handle_exit(sig, frame)


def worker_app() -> "GatewayApp":
    """The factory each uvicorn worker calls: the app, then the process tuned for a
    long-running server (garbage collector and malloc; see worker_tuning.py)."""
    from switchgate.app import create_app_from_env  # here: the supervisor doesn't need it

    configure_logging(Settings.from_env())  # a spawned worker starts with no handlers
    app = create_app_from_env()
    tune_worker()
    return app


@contextlib.contextmanager
def metrics_directory() -> Iterator[None]:
    """prometheus-client's multi-process mode for `--workers N`: every worker writes its
    series to files in one directory that a scrape of any worker sums up. An operator's
    own PROMETHEUS_MULTIPROC_DIR is used (emptied first); otherwise a temporary one."""
    configured = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    path = Path(configured) if configured else Path(tempfile.mkdtemp(prefix="switchgate-metrics-"))
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    try:
        yield
    finally:
        if not configured:
            shutil.rmtree(path, ignore_errors=True)


def _safe(url: str) -> str:
    """A database URL without its password."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return url
