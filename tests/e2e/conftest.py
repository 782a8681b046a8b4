"""Fixtures for the browser tests: headless Chromium through Playwright."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser import ARGS, chromium_path
from tests.support import IN_CI


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        message = "Chromium is not installed (apt-get install -y chromium): browser tests skipped"
        if IN_CI:
            pytest.fail(message.replace("skipped", "are required in CI"))
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=path, args=ARGS, headless=True)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    yield tab
    context.close()
