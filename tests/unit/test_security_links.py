"""Links sent away (password reset, verification, OAuth redirect_uri) come from the public
URL, or from the request's Host only when it is loopback, the bind address or allowed."""

import pytest

from switchgate.console.deps import UntrustedHost, trusted_link_base
from switchgate.settings import Settings

BASE = "http://seen:8080"


def test_the_public_url_always_wins() -> None:
    got = trusted_link_base("https://gw.example.com", (), "0.0.0.0", BASE, "attacker.example")
    assert got == "https://gw.example.com"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.9.8.7", "localhost", "::1", "gw.lan"])
def test_trusted_hosts_use_the_request_address(host: str) -> None:
    assert trusted_link_base("", ("gw.lan",), "127.0.0.1", BASE, host) == BASE


def test_the_bind_address_is_trusted_but_not_a_wildcard() -> None:
    assert trusted_link_base("", (), "10.1.2.3", BASE, "10.1.2.3") == BASE
    with pytest.raises(UntrustedHost):
        trusted_link_base("", (), "0.0.0.0", BASE, "0.0.0.0")


@pytest.mark.parametrize("host", ["attacker.example", "gw.lan.attacker.example", ""])
def test_any_other_host_is_refused(host: str) -> None:
    with pytest.raises(UntrustedHost, match="SWITCHGATE_PUBLIC_URL"):
        trusted_link_base("", ("gw.lan",), "127.0.0.1", BASE, host)


def test_allowed_hosts_from_env_and_config() -> None:
    env = {"SWITCHGATE_ALLOWED_HOSTS": " GW.example.com, other.lan ,"}
    assert Settings.from_env(env).allowed_hosts == ("gw.example.com", "other.lan")
    assert Settings().with_overrides({"allowed_hosts": ["A.lan"]}).allowed_hosts == ("a.lan",)


@pytest.mark.parametrize(
    "email",
    ["a\x00b@x.com", "a@x.com\r\nBcc: z@y.com", "a\tb@x.com", "a\u2028@x.com", "a" * 320 + "@x.co"],
)
def test_email_with_control_characters_or_too_long_is_refused(email: str) -> None:
    from switchgate.accounts.service import AccountError, normalise_email

    with pytest.raises(AccountError, match="not an e-mail address"):
        normalise_email(email)
    assert normalise_email("  Ann@Example.COM ") == "ann@example.com"
