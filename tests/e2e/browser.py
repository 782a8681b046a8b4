"""Headless Chromium (Debian's package) driven by Playwright, for the console's tests.

Skipped with a clear message when Chromium is missing, except in CI (CI=true), where a
missing browser fails the tests (scripts/test installs it when run as root).
"""

import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from tests.support import ROOT

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS_SCREENSHOTS = ROOT / "docs" / "screenshots"
# The docs' screenshots are rewritten only on request, so a test run leaves the checkout
# clean; otherwise they go to a scratch directory (still taken: the page must render).
WRITE_DOCS_SCREENSHOTS = os.environ.get("SWITCHGATE_WRITE_SCREENSHOTS") == "1"
SCRATCH_SCREENSHOTS = Path(tempfile.gettempdir()) / "switchgate-screenshots"
T = TypeVar("T")


def chromium_path() -> str | None:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return shutil.which("chromium")


def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run fn in a worker thread: Playwright's sync API keeps an event loop running in
    this one, and the test helpers that touch the database use asyncio.run()."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def screenshot(page: Any, name: str) -> None:
    target = DOCS_SCREENSHOTS if WRITE_DOCS_SCREENSHOTS else SCRATCH_SCREENSHOTS
    target.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(150)  # let the last paint settle
    page.screenshot(path=str(target / f"{name}.png"))


def sign_in(page: Any, base_url: str, email: str, password: str) -> None:
    page.goto(f"{base_url}/console/signin")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/console")
