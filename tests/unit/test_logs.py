"""Log format: JSON lines off a terminal (or when asked), text on one; the access line."""

import io
import json
import logging

from switchgate.billing.recorder import Record
from switchgate.catalog import Catalog
from switchgate.observability.logs import AccessLog, configure_logging, wants_json
from switchgate.routing.channels import Channel
from switchgate.settings import Settings


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_json_unless_a_terminal() -> None:
    assert wants_json("auto", io.StringIO()) and not wants_json("auto", Tty())
    assert wants_json("json", Tty()) and not wants_json("text", io.StringIO())


def test_access_line_fields_and_levels() -> None:
    catalog = Catalog.build([Channel(3, "main", "openai", "http://x", "k", ("m",))], {}, 0)
    out = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    configure_logging(Settings(log_format="json"), out)
    try:
        log = AccessLog(lambda: catalog)
        record = Record("req_1", 0, 5, 9, "m", "openai", "chat.completions", 200, cost=1234,
                        channel_id=3, latency_ms=12)  # fmt: skip
        log.observe(record)
        logging.getLogger("switchgate").warning("plain %s", "words")
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        assert lines[0]["logger"] == "switchgate.access" and lines[0]["channel"] == "main"
        assert lines[0]["cost_usd"] == "0.000000001234" and lines[0]["token_id"] == 9
        assert lines[1]["message"] == "plain words" and lines[1]["level"] == "warning"
        configure_logging(Settings(log_format="json", access_log=False), out)
        before = out.getvalue()
        log.observe(record)
        assert out.getvalue() == before
        text = Tty()
        configure_logging(Settings(), text)
        log.observe(record)
        assert "request_id=req_1" in text.getvalue() and "{" not in text.getvalue()
    finally:
        logging.getLogger("switchgate.access").disabled = False
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
