"""axe-core (from npm, tests/e2e/js) run inside the page, and the phone-width check.

axe is evaluated through the DevTools protocol, so the console's CSP (script-src 'self')
stays on. Without `npm ci` in tests/e2e/js the accessibility checks are skipped, except
in CI, where they fail."""

from pathlib import Path
from typing import Any

import pytest

from tests.support import IN_CI

AXE = Path(__file__).parent / "js" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
# What must never be found; "minor" findings are reported by axe but not failed on.
BLOCKING = ("critical", "serious", "moderate")


def axe_source() -> str:
    if not AXE.exists():
        message = "axe-core is not installed (cd tests/e2e/js && npm ci): a11y checks skipped"
        if IN_CI:
            pytest.fail(message.replace("skipped", "are required in CI"))
        pytest.skip(message)
    return AXE.read_text()


def axe_findings(page: Any, source: str) -> list[str]:
    """Serious and moderate axe violations on the page as it is now, one line each."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(source)
    result = page.evaluate(
        """async () => {
          const r = await axe.run(document, { resultTypes: ["violations"] });
          return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) }));
        }"""
    )
    return [
        f"{v['impact']}: {v['id']} ({v['help']}) at {', '.join(v['nodes'])}"
        for v in result
        if v["impact"] in BLOCKING
    ]


def horizontal_overflow(page: Any) -> int:
    """How many pixels the page is wider than the viewport (0: no sideways scrolling)."""
    return int(
        page.evaluate(
            "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - window.innerWidth"
        )
    )
