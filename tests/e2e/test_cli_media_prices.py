"""`switchgate prices set` with the media options, and the cohere/jina channel kinds."""

import asyncio
from pathlib import Path

import pytest

from switchgate.billing.prices import load_prices
from switchgate.providers.registry import provider_kinds
from switchgate.storage.db import Database
from tests.support import gateway_env, run_cli


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return gateway_env(tmp_path_factory.mktemp("cli-media"), None)


def _stored(env: dict[str, str]) -> dict[str, object]:
    async def load() -> dict[str, object]:
        db = Database(f"sqlite+aiosqlite:///{Path(env['SWITCHGATE_DATA_DIR']) / 'switchgate.db'}")
        try:
            async with db.connect() as conn:
                return dict(await load_prices(conn))
        finally:
            await db.dispose()

    return asyncio.run(load())


def test_media_prices_are_stored_as_integer_units(cli_env: dict[str, str]) -> None:
    run_cli(
        cli_env, "prices", "set", "dall-e-3", "--kind", "image", "--per-image", "0.04",
        "--image-price", "1024x1024:hd=0.08", "--image-price", "1792x1024=0.12",
    )  # fmt: skip
    run_cli(cli_env, "prices", "set", "tts-1", "--kind", "tts", "--per-1m-characters", "15")
    run_cli(cli_env, "prices", "set", "whisper-1", "--kind", "stt", "--per-minute", "0.006")
    run_cli(cli_env, "prices", "set", "rr", "--kind", "rerank", "--per-request", "0.002")
    run_cli(cli_env, "prices", "set", "emb", "--kind", "embedding", "--input", "0.02")
    prices = _stored(cli_env)
    assert prices["dall-e-3"].extra == {  # type: ignore[attr-defined]
        "image": 40_000_000_000,
        "image:1024x1024:hd": 80_000_000_000,
        "image:1792x1024": 120_000_000_000,
    }
    assert prices["tts-1"].extra == {"per_character": 15_000_000}  # type: ignore[attr-defined]
    assert prices["whisper-1"].extra == {"per_minute": 6_000_000_000}  # type: ignore[attr-defined]
    assert prices["rr"].per_request == 2_000_000_000  # type: ignore[attr-defined]
    assert prices["emb"].kind == "embedding" and prices["emb"].input == 20_000  # type: ignore[attr-defined]
    listed = run_cli(cli_env, "prices", "list").stdout
    assert "image:1024x1024:hd 0.08" in listed and "per_1m_characters 15" in listed
    assert "per_minute 0.006" in listed and "per_request 0.002" in listed


@pytest.mark.parametrize(
    "args",
    [
        ["prices", "set", "m", "--input", "1"],  # chat prices need --output too
        ["prices", "set", "m", "--kind", "image", "--image-price", "1024x1024"],
        ["prices", "set", "m", "--kind", "image", "--per-image", "-1"],
        ["prices", "set", "m", "--kind", "stt", "--per-minute", "abc"],
    ],
)
def test_bad_media_prices_are_refused(cli_env: dict[str, str], args: list[str]) -> None:
    bad = run_cli(cli_env, *args, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("error:")


def test_rerank_channel_kinds(cli_env: dict[str, str]) -> None:
    """Every kind the registry says serves rerank can be added as a channel."""
    rerankers = [name for name, kind in provider_kinds().items() if kind.rerank() is not None]
    assert {"cohere", "jina"} <= set(rerankers)
    for kind in rerankers:
        run_cli(
            cli_env, "channels", "add", f"rr-{kind}", "--kind", kind,
            "--base-url", "https://api.example.com", "--key", "k", "--models", "rr",
        )  # fmt: skip
    listed = run_cli(cli_env, "channels", "list").stdout
    assert all(f"\trr-{kind}\t{kind}\t" in listed for kind in rerankers), listed
