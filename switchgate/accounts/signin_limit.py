"""The account flows' rate limits: sign-in, sign-up and the e-mails they send.

- sign-in: attempts per e-mail address and per client IP, counted atomically before the
  password is checked; a success clears the address's count (so a typo does not
  linger), the IP's count stays;
- sign-up: attempts per client IP (every valid form counts, whether or not the address
  was free, so probing for registered addresses is limited too; so does every GitHub /
  Google sign-in that creates an account);
- e-mails (verification resend, password reset): per address and per client IP.

The counts live in Redis when it is configured (shared by every process and replica),
otherwise in this process; see attempt_limits.py. The limits come from Settings.
"""

from redis.asyncio import Redis

from switchgate.accounts.attempt_limits import (
    AttemptStore,
    Check,
    Limit,
    MemoryAttempts,
    RedisAttempts,
)
from switchgate.settings import Settings


class AccountLimits:
    def __init__(self, settings: Settings | None = None, store: AttemptStore | None = None) -> None:
        s = settings or Settings()
        self.store: AttemptStore = store if store is not None else MemoryAttempts()
        self.signin_email = Limit(s.signin_limit_per_email, s.signin_limit_window_seconds)
        self.signin_ip = Limit(s.signin_limit_per_ip, s.signin_limit_window_seconds)
        self.signup_ip = Limit(s.signup_limit_per_ip, s.signup_limit_window_seconds)
        self.mail_email = Limit(s.mail_limit_per_email, s.mail_limit_window_seconds)
        self.mail_ip = Limit(s.mail_limit_per_ip, s.mail_limit_window_seconds)

    @classmethod
    def create(cls, settings: Settings, redis: "Redis | None") -> "AccountLimits":
        """Shared through Redis when there is a client, else in this process."""
        store: AttemptStore = RedisAttempts(redis) if redis is not None else MemoryAttempts()
        return cls(settings, store)

    def _signin(self, email: str, ip: str | None) -> list[Check]:
        return [
            Check(f"signin:email:{email}", self.signin_email),
            Check(f"signin:ip:{ip or ''}", self.signin_ip),
        ]

    async def signin_wait(self, email: str, ip: str | None) -> int | None:
        """Seconds to wait before another sign-in attempt (not counted), or None."""
        return await self.store.run(self._signin(email, ip), "peek")

    async def signin_failed(self, email: str, ip: str | None) -> None:
        """Count an attempt without checking (take_signin counts and checks at once)."""
        await self.store.run(self._signin(email, ip), "add")

    async def take_signin(self, email: str, ip: str | None) -> int | None:
        """Count one sign-in attempt BEFORE the password is checked (so a burst cannot
        slip through while argon2 runs): None if allowed, else seconds to wait (not
        counted). A success then clears the address's count (`signin_succeeded`)."""
        return await self.store.run(self._signin(email, ip), "take")

    async def signin_succeeded(self, email: str, ip: str | None = None) -> None:
        """A success clears the address's count and gives the IP its attempt back (a
        network counts failures: an office behind one address signs in all day)."""
        await self.store.clear(f"signin:email:{email}")
        if ip is not None:
            await self.store.refund(f"signin:ip:{ip}")

    async def take_signup(self, ip: str | None) -> int | None:
        """Count one sign-up attempt; None if allowed, else seconds to wait (not counted)."""
        return await self.store.run([Check(f"signup:ip:{ip or ''}", self.signup_ip)], "take")

    async def take_mail(self, email: str, ip: str | None) -> int | None:
        """Count one e-mail to `email`; None if allowed, else seconds to wait (not counted)."""
        checks = [
            Check(f"mail:email:{email}", self.mail_email),
            Check(f"mail:ip:{ip or ''}", self.mail_ip),
        ]
        return await self.store.run(checks, "take")
