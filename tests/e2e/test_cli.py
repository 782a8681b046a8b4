"""The operator CLI in the exact forms operators script, against a fresh database, and
a running server picking up CLI changes within 2 seconds."""

import time
from pathlib import Path

import openai
import pytest

from tests.conftest import Gateway
from tests.support import gateway_env, run_cli


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return gateway_env(tmp_path_factory.mktemp("cli"), None)


def test_user_balance_and_token_commands(cli_env: dict[str, str]) -> None:
    run_cli(cli_env, "users", "add", "Ops@Example.com", "--password", "pw-123456", "--admin")
    added = run_cli(cli_env, "balance", "add", "ops@example.com", "12.345678", "--note", "welcome")
    assert added.stdout.strip().splitlines()[-1] == "12.345678"
    run_cli(cli_env, "balance", "add", "ops@example.com", "-2.345678")
    shown = run_cli(cli_env, "balance", "show", "ops@example.com")
    assert shown.stdout.strip().splitlines()[-1] == "10.00"
    created = run_cli(cli_env, "tokens", "create", "ops@example.com", "--name", "ci")
    last = created.stdout.rstrip("\n").splitlines()[-1]
    assert last.startswith("sk-") and len(last) > 40 and last == last.strip()
    listed = run_cli(cli_env, "tokens", "list", "ops@example.com")
    assert last[:7] in listed.stdout and last not in listed.stdout  # only the prefix is kept


def test_channel_and_price_commands(cli_env: dict[str, str]) -> None:
    run_cli(
        cli_env,
        "channels",
        "add",
        "main",
        "--kind",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--key",
        "sk-upstream-secret",
        "--models",
        "m1,m2",
        "--priority",
        "5",
        "--weight",
        "3",
        "--map",
        "m2=real-m2",
    )
    listed = run_cli(cli_env, "channels", "list").stdout
    assert "main" in listed and "m1" in listed and "sk-upstream-secret" not in listed
    run_cli(
        cli_env,
        "prices",
        "set",
        "m1",
        "--input",
        "0.15",
        "--output",
        "0.6",
        "--cache-read",
        "0.075",
    )
    assert "m1" in run_cli(cli_env, "prices", "list").stdout


def test_operator_mistakes_get_a_clear_error(cli_env: dict[str, str]) -> None:
    bad = run_cli(cli_env, "balance", "add", "nobody@example.com", "1", check=False)
    assert bad.returncode == 2 and "no user" in bad.stderr
    bad = run_cli(cli_env, "prices", "set", "m1", "--input", "abc", "--output", "1", check=False)
    assert bad.returncode == 2 and "error:" in bad.stderr
    bad = run_cli(
        cli_env,
        "channels",
        "add",
        "x",
        "--kind",
        "nope",
        "--base-url",
        "http://a",
        "--key",
        "k",
        "--models",
        "m",
        check=False,
    )
    assert bad.returncode == 2 and "unknown channel kind" in bad.stderr


def test_running_server_sees_cli_changes_within_two_seconds(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    run_cli(
        gateway.env,
        "channels",
        "add",
        "late-channel",
        "--kind",
        "openai",
        "--base-url",
        f"{gateway.mock_url}/v1",
        "--key",
        "mock-key",
        "--models",
        "late-model",
    )
    run_cli(gateway.env, "prices", "set", "late-model", "--input", "1", "--output", "1")
    changed_at = time.monotonic()
    while "late-model" not in {m.id for m in sdk.models.list()}:
        assert time.monotonic() - changed_at < 2.0, "the server did not see the change in 2 s"
        time.sleep(0.05)
    reply = sdk.chat.completions.create(
        model="late-model", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content


def test_revoked_token_stops_working(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    sdk.models.list()
    token_id = run_cli(gateway.env, "tokens", "list", email).stdout.split()[0]
    run_cli(gateway.env, "tokens", "revoke", token_id)
    deadline = time.monotonic() + 2.0
    while True:
        try:
            sdk.models.list()
        except openai.AuthenticationError:
            break
        assert time.monotonic() < deadline, "a revoked token still worked after 2 s"
        time.sleep(0.05)


def test_config_file_is_applied_idempotently(cli_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[[channels]]\nname = "cfg"\nkind = "anthropic"\nbase_url = "https://api.anthropic.com"\n'
        'key = "k"\nmodels = ["claude-x"]\n[prices."claude-x"]\ninput = 3\noutput = "15"\n'
    )
    first = run_cli(cli_env, "config", str(config)).stdout
    second = run_cli(cli_env, "config", str(config)).stdout
    assert "channel cfg created" in first and "channel cfg updated" in second
    assert run_cli(cli_env, "channels", "list").stdout.count("\tcfg\t") == 1
