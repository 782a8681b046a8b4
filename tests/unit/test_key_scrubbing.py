"""Upstream error messages never carry a channel key to the client, whatever the vendor's
key format (providers/openai_response.py `scrub`, used by every OpenAI-compatible preset)."""

import pytest

from switchgate import jsonutil
from switchgate.providers.openai_compatible import Preset, PresetProvider
from switchgate.providers.openai_presets import PRESETS
from switchgate.providers.openai_response import scrub

KEYS = {
    "openai": "sk-proj-Ab12Cd34Ef56Gh78Ij90",
    "openrouter": "sk-or-v1-0123456789abcdef0123456789abcdef",
    "groq": "gsk_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
    "xai": "xai-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
    "fireworks": "fw_3ZAb12Cd34Ef56Gh78Ij90Kl",
    "together": "tgp_v1_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56",
    "together-legacy": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "mistral": "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF",
    "perplexity": "pplx-0123456789abcdef0123456789abcdef",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "google": "AIzaSyA-0123456789abcdefghijklmnopq",
}


@pytest.mark.parametrize("vendor", sorted(KEYS))
def test_scrub_redacts_each_key_format(vendor: str) -> None:
    key = KEYS[vendor]
    text = scrub(f"Incorrect API key provided: {key}. Check your key.")
    assert key not in text and "[redacted]" in text, text
    assert text.startswith("Incorrect API key provided: ")


def test_scrub_keeps_ordinary_words_and_model_names() -> None:
    text = "model deepseek-r1-distill-llama-70b: max_tokens must be at most 8192"
    assert scrub(text) == text


@pytest.mark.parametrize("item", PRESETS, ids=lambda p: p.kind)
def test_preset_errors_never_echo_a_key(item: Preset) -> None:
    provider = PresetProvider(item)
    for key in KEYS.values():
        body = jsonutil.dumps({"error": {"message": f"invalid key {key}", "type": "x"}})
        for status in (400, 429, 500):
            assert key not in provider.classify_error(status, body).message
