"""The channel options each kind declares (ProviderKind.options): what the console's form
offers. A declared option must be one the adapter reads, never a reserved setting."""

from switchgate.providers.registry import provider_kinds
from switchgate.routing.channels import RESERVED_OPTIONS


def test_the_kinds_declare_the_options_their_adapters_read() -> None:
    kinds = provider_kinds()
    declared = {name: [o.name for o in kind.options] for name, kind in kinds.items()}
    assert declared["bedrock"] == ["region"]
    assert declared["vertex"] == ["project", "location", "publisher", "embedding_task_type"]
    assert declared["cohere"] == ["input_type"]
    assert declared["openrouter"] == ["http_referer", "x_title"]  # from the preset's headers
    assert declared["mistral"] == ["safe_prompt"]  # from the preset's body options
    assert declared["openai"] == [] and declared["ollama"] == []


def test_every_option_has_a_hint_and_no_reserved_name() -> None:
    for kind in provider_kinds().values():
        names = [o.name for o in kind.options]
        assert len(names) == len(set(names)), kind.name
        for option in kind.options:
            assert option.hint and option.name not in RESERVED_OPTIONS, (kind.name, option)
        assert kind.key_format, kind.name


def test_key_formats_say_what_the_key_is() -> None:
    kinds = provider_kinds()
    assert "ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]" in kinds["bedrock"].key_format
    assert "service account" in kinds["vertex"].key_format
    assert "optional" in kinds["ollama"].key_format and not kinds["ollama"].needs_key
