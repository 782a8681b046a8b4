"""`switchgate channels add --key A --key B`, `channels keys`, `channels key-disable`
and `key-enable` against a real database; a config file's `keys` list."""

from pathlib import Path

from tests.support import gateway_env, run_cli


def test_a_channel_with_several_keys(tmp_path: Path) -> None:
    env = gateway_env(tmp_path, None)
    run_cli(env, "migrate")
    run_cli(
        env,
        "channels",
        "add",
        "multi",
        "--kind",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--key",
        "sk-first-key-0001",
        "--key",
        "sk-second-key-0002",
        "--key-weights",
        "1,3",
        "--models",
        "m1",
    )
    listed = run_cli(env, "channels", "keys", "multi").stdout.splitlines()
    assert listed == ["0\t…0001\tweight 1\tenabled", "1\t…0002\tweight 3\tenabled"]
    assert "sk-first" not in "".join(listed)
    run_cli(env, "channels", "key-disable", "multi", "1")
    disabled = run_cli(env, "channels", "keys", "multi").stdout.splitlines()[1]
    assert "\tdisabled\t" in disabled and "UTC" in disabled and "disabled by hand" in disabled
    # re-applying a config with the same keys keeps the key disabled
    config = tmp_path / "c.toml"
    config.write_text(
        '[[channels]]\nname = "multi"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'keys = ["sk-first-key-0001", { key = "sk-second-key-0002", weight = 3 }, '
        '"sk-third-key-0003"]\nmodels = ["m1"]\n'
    )
    run_cli(env, "config", str(config))
    lines = run_cli(env, "channels", "keys", "multi").stdout.splitlines()
    assert len(lines) == 3 and "\tdisabled\t" in lines[1] and lines[2].endswith("enabled")
    run_cli(env, "channels", "key-enable", "multi", "1")
    assert run_cli(env, "channels", "keys", "multi").stdout.splitlines()[1].endswith("enabled")
    bad = run_cli(env, "channels", "key-enable", "multi", "7", check=False)
    assert bad.returncode != 0 and "no key at position 7" in bad.stderr + bad.stdout
    weights = run_cli(
        env,
        "channels",
        "add",
        "x",
        "--kind",
        "openai",
        "--base-url",
        "http://h/v1",
        "--key",
        "a",
        "--key-weights",
        "1,2",
        "--models",
        "m",
        check=False,
    )
    assert weights.returncode != 0 and "--key-weights" in weights.stderr + weights.stdout


def test_per_key_caps_by_hand_and_from_a_config_file(tmp_path: Path) -> None:
    env = gateway_env(tmp_path, None)
    run_cli(env, "migrate")
    config = tmp_path / "c.toml"
    config.write_text(
        '[[channels]]\nname = "multi"\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'keys = ["sk-first-key-0001", "sk-third-key-0003"]\nmodels = ["m1"]\n'
    )
    run_cli(env, "config", str(config))
    run_cli(env, "channels", "key-limit", "multi", "0", "--max-concurrency", "4", "--rpm", "60")
    first = run_cli(env, "channels", "keys", "multi").stdout.splitlines()[0]
    assert first == "0\t…0001\tweight 1, max 4 in flight, 60 rpm\tenabled"
    run_cli(env, "channels", "key-limit", "multi", "0", "--rpm", "0")
    first = run_cli(env, "channels", "keys", "multi").stdout.splitlines()[0]
    assert first == "0\t…0001\tweight 1, max 4 in flight\tenabled"
    bad_cap = run_cli(env, "channels", "key-limit", "multi", "0", "--rpm", "-2", check=False)
    assert bad_cap.returncode != 0 and "rpm" in bad_cap.stderr + bad_cap.stdout
    config.write_text(
        config.read_text().replace(
            '"sk-third-key-0003"', '{ key = "sk-third-key-0003", max_concurrency = 2, rpm = 30 }'
        )
    )
    run_cli(env, "config", str(config))
    second = run_cli(env, "channels", "keys", "multi").stdout.splitlines()[1]
    assert second == "1\t…0003\tweight 1, max 2 in flight, 30 rpm\tenabled"
