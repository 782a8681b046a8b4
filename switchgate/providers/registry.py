"""The one list of provider kinds. Adding a provider: a module and one line here."""

from collections.abc import Mapping

from switchgate.providers.anthropic import AnthropicProvider
from switchgate.providers.base import ChatProvider
from switchgate.providers.gemini import GeminiProvider
from switchgate.providers.openai import AzureOpenAIProvider, OpenAIProvider


def chat_providers() -> Mapping[str, ChatProvider]:
    return {
        "openai": OpenAIProvider(),
        "azure": AzureOpenAIProvider(),
        "anthropic": AnthropicProvider(),
        "gemini": GeminiProvider(),
    }
