"""Outgoing e-mail (verification and password reset) over SMTP, from the site settings."""

import asyncio
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage

from switchgate.accounts.site_settings import SiteSettings


class MailError(RuntimeError):
    pass


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    security: str  # none | starttls | tls
    user: str
    password: str
    sender: str

    @classmethod
    def from_site(cls, site: SiteSettings) -> "SmtpConfig | None":
        if not site.smtp_configured:
            return None
        return cls(
            host=site.get("smtp_host"),
            port=int(site.get("smtp_port") or 25),
            security=site.get("smtp_security"),
            user=site.get("smtp_user"),
            password=site.get("smtp_password"),
            sender=site.get("smtp_from"),
        )


def _send_blocking(config: SmtpConfig, message: EmailMessage) -> None:
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if config.security == "tls":
        smtp = smtplib.SMTP_SSL(config.host, config.port, timeout=20, context=context)
    else:
        smtp = smtplib.SMTP(config.host, config.port, timeout=20)
    with smtp:
        if config.security == "starttls":
            smtp.starttls(context=context)
        if config.user:
            smtp.login(config.user, config.password)
        smtp.send_message(message)


async def send_mail(config: SmtpConfig, to: str, subject: str, body: str) -> None:
    message = EmailMessage()
    message["From"] = config.sender
    message["To"] = to
    message["Subject"] = subject
    message.set_content(body)
    try:
        await asyncio.to_thread(_send_blocking, config, message)
    except (OSError, smtplib.SMTPException) as exc:
        raise MailError(f"could not send e-mail ({type(exc).__name__})") from exc
