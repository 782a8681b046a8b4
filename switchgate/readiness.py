"""`GET /healthz` and `GET /readyz`: liveness and readiness for load balancers and probes.

- `/healthz`: the process is alive and its event loop answers; it looks at nothing else,
  so a database outage never gets replicas restarted by a liveness probe.
- `/readyz`: this replica should get traffic: start-up finished, it is not draining,
  the database answers and its schema is at this release's head (or ahead of it, see
  storage/migrate.py), and Redis answers when one is configured. Otherwise 503 with
  `{"status": ..., "reason": ...}`.

Both are answered before authentication, billing and request logs ever run (app.py
hands them to the plain web app), and cost no more than one `SELECT` and one `PING`.
"""

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from switchgate.state import AppState
from switchgate.storage import migrate

CHECK_TIMEOUT = 2.0  # seconds for each dependency; probes usually time out at 3-5 s


def _unready(status: str, reason: str) -> JSONResponse:
    return JSONResponse({"status": status, "reason": reason}, status_code=503)


async def healthz(_: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readiness(state: AppState) -> JSONResponse:
    if state.draining:
        return _unready("draining", "the process is shutting down")
    if not state.ready:
        return _unready("starting", "start-up has not finished")
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            schema = await migrate.current_status(state.db)
    except Exception as exc:  # any driver error means: not reachable
        return _unready("unavailable", f"database unreachable: {type(exc).__name__}: {exc}")
    if schema in ("empty", "behind"):
        return _unready(
            "migrations-pending",
            f"database schema is {schema}; run `switchgate migrate` "
            f"(this release needs {migrate.head_revision()})",
        )
    if state.redis is not None:
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                await state.redis.ping()
        except Exception as exc:
            return _unready("unavailable", f"redis unreachable: {type(exc).__name__}: {exc}")
    return JSONResponse({"status": "ready", "schema": schema})
