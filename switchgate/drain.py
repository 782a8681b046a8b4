"""Graceful shutdown on SIGTERM: readiness first, then no new connections, then drain.

uvicorn already stops accepting connections on SIGTERM, waits for in-flight requests
and streams up to `timeout_graceful_shutdown` (SWITCHGATE_DRAIN_SECONDS, default 30 s),
then runs the lifespan shutdown, where Lifecycle.shutdown writes every queued charge and
request-log row. What this adds, installed at start-up over uvicorn's own handler:

- `/readyz` answers 503 ("draining") from the moment SIGTERM arrives;
- with SWITCHGATE_DRAIN_DELAY_SECONDS > 0 the process keeps accepting (and serving) new
  connections for that long before it hands the signal on, so a load balancer that
  routes by readiness (or a Kubernetes Service whose endpoints lag the pod's deletion)
  stops sending traffic before the listener closes. A second SIGTERM skips the delay.

Nothing is installed outside the main thread (tests that run the app in a thread) or when
no server handler is there to hand the signal on to.
"""

import asyncio
import logging
import signal
import threading
from types import FrameType

from switchgate.state import AppState

log = logging.getLogger("switchgate.drain")


def install(state: AppState, delay: float) -> bool:
    """Wrap the running server's SIGTERM handler; True if it was installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    previous = signal.getsignal(signal.SIGTERM)
    if not callable(previous):
        return False
    loop = asyncio.get_running_loop()

    def hand_on(sig: int, frame: FrameType | None) -> None:
        previous(sig, frame)

    def on_sigterm(sig: int, frame: FrameType | None) -> None:
        if state.draining:  # a second SIGTERM: stop waiting
            hand_on(sig, frame)
            return
        state.draining = True
        log.info("SIGTERM: draining (readiness 503; listener closes in %.1f s)", delay)
        if delay > 0:
            loop.call_soon_threadsafe(loop.call_later, delay, hand_on, sig, None)
        else:
            hand_on(sig, frame)

    signal.signal(signal.SIGTERM, on_sigterm)
    return True
