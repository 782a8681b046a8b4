"""Fallback models as written by operators (routing/fallbacks.py), and the config file's
[settings] reaching the app process through the environment (settings.py)."""

import json

import pytest

from switchgate.routing import fallbacks
from switchgate.settings import FILE_SETTINGS_VAR, Settings


def test_parse_and_render_round_trip() -> None:
    parsed = fallbacks.parse(" gpt-5 = claude-sonnet-4-5, gpt-4.1 ;o3=gpt-5\nx=")
    assert parsed == {"gpt-5": ("claude-sonnet-4-5", "gpt-4.1"), "o3": ("gpt-5",)}
    assert fallbacks.render(parsed) == "gpt-5=claude-sonnet-4-5,gpt-4.1; o3=gpt-5"
    assert fallbacks.parse(fallbacks.render(parsed)) == parsed
    assert fallbacks.parse("") == {}
    assert fallbacks.parse("a=b,b,c") == {"a": ("b", "c")}


@pytest.mark.parametrize(
    ("raw", "words"),
    [("gpt-5", "MODEL=FALLBACK"), ("gpt-5=gpt-5", "itself"), ("=b", "not a model name")],
)
def test_bad_values_are_refused(raw: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        fallbacks.parse(raw)


def test_a_config_files_table() -> None:
    table = {"gpt-5": ["claude-sonnet-4-5", "gpt-4.1"], "o3": "gpt-5", "old": []}
    assert fallbacks.from_table(table) == {
        "gpt-5": ("claude-sonnet-4-5", "gpt-4.1"),
        "o3": ("gpt-5",),
        "old": (),
    }
    for bad in ({"a": 3}, {"a": ["a"]}, ["a"]):
        with pytest.raises(ValueError):
            fallbacks.from_table(bad)


def test_the_file_settings_reach_a_process_built_from_the_environment() -> None:
    table = {"max_body_bytes": 1234, "routing": {"max_attempts": 5}, "timeouts": {"idle": 7}}
    settings = Settings.from_env({FILE_SETTINGS_VAR: json.dumps(table)})
    assert settings.max_body_bytes == 1234
    assert settings.routing.max_attempts == 5 and settings.timeouts.idle == 7
    assert FILE_SETTINGS_VAR.removeprefix("SWITCHGATE_").lower() not in settings.site_env
    assert Settings.from_env({}).max_body_bytes != 1234


def test_unknown_nested_settings_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"\[fallbacks\] table"):
        Settings().with_overrides({"routing": {"fallbacks": {"a": ["b"]}}})
    with pytest.raises(ValueError, match="unknown settings in"):
        Settings().with_overrides({"timeouts": {"nope": 1}})
