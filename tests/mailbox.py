"""A real local SMTP server (aiosmtpd) that keeps what the gateway sends, for tests."""

import re
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Mail:
    to: list[str]
    subject: str
    body: str


@dataclass
class MailBox:
    messages: list[Mail] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        parsed: Message = message_from_bytes(envelope.original_content or envelope.content)
        payload = parsed.get_payload(decode=True) if not parsed.is_multipart() else b""
        body = payload.decode(errors="replace") if isinstance(payload, bytes) else ""
        self.messages.append(Mail(list(envelope.rcpt_tos), str(parsed["Subject"]), body))
        return "250 OK"

    def wait_for(self, to: str, subject_part: str, timeout: float = 10.0) -> Mail:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for mail in reversed(self.messages):
                if to.lower() in [t.lower() for t in mail.to] and subject_part in mail.subject:
                    return mail
            time.sleep(0.05)
        raise AssertionError(f"no mail to {to} about {subject_part!r}: {self.messages}")

    def link(self, to: str, subject_part: str) -> str:
        mail = self.wait_for(to, subject_part)
        found = re.search(r"https?://\S+", mail.body)
        assert found, mail.body
        return found.group(0)


class SmtpServer:
    def __init__(self, port: int) -> None:
        self.box = MailBox()
        self.port = port
        self.controller = Controller(self.box, hostname="127.0.0.1", port=port)

    def start(self) -> None:
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()
