"""The OpenAI-compatible presets: one `Preset` per vendor, its base URL, auth and quirks.

Every quirk carries a one-line source note (`Preset.sources`); a vendor without a
documented quirk is a plain preset (a default base URL and its auth). docs/providers.md
("OpenAI-compatible presets") renders the same table for people.
"""

from typing import Final

from switchgate.providers.openai_compatible import CHAT, EMBEDDINGS, Preset
from switchgate.providers.openai_quirks import ReplyQuirks, RequestQuirks

CHAT_ONLY: Final = frozenset({CHAT})
CHAT_EMBED: Final = frozenset({CHAT, EMBEDDINGS})

# Mistral validates strictly ("Extra inputs are not permitted", 422): only the fields of
# its chat completion request schema go out.
MISTRAL_FIELDS: Final = frozenset(
    {
        "model",
        "messages",
        "temperature",
        "top_p",
        "max_tokens",
        "stream",
        "stop",
        "random_seed",
        "response_format",
        "tools",
        "tool_choice",
        "presence_penalty",
        "frequency_penalty",
        "n",
        "prediction",
        "parallel_tool_calls",
        "prompt_mode",
        "safe_prompt",
    }
)
# The Grok models known to take reasoning_effort (substrings of the model id).
XAI_EFFORT_MODELS: Final = ("grok-3-mini", "grok-4.3", "grok-4.20-multi-agent")
_REASONER_IGNORED: Final = (
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "logprobs",
    "top_logprobs",
)

PRESETS: Final[tuple[Preset, ...]] = (
    Preset(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com",
        request=RequestQuirks(
            model_drop_fields=(("reasoner", _REASONER_IGNORED),), thinking="deepseek"
        ),
        sources=(
            "api-docs.deepseek.com/guides/reasoning_model: deepseek-reasoner ignores temperature,"
            " top_p and the penalties, and answers 400 to logprobs/top_logprobs",
            "api-docs.deepseek.com/guides/thinking_mode: thinking on/off is"
            ' {"thinking": {"type": "enabled|disabled"}}; reasoning_content comes beside'
            " content and must be sent back after tool calls",
        ),
    ),
    Preset(
        "mistral",
        "Mistral AI",
        "https://api.mistral.ai/v1",
        endpoints=CHAT_EMBED,
        request=RequestQuirks(
            allowed_fields=MISTRAL_FIELDS,
            renames=(("max_completion_tokens", "max_tokens"), ("seed", "random_seed")),
            stream_options=False,
            history_reasoning=False,
            tool_ids="alnum9",
            body_options=("safe_prompt",),
        ),
        reply=ReplyQuirks(content_chunks=True),
        embeddings_dimensions="output_dimension",
        embeddings_batch_limit=512,
        sources=(
            "docs.mistral.ai API (chat completion schema): max_tokens, random_seed, safe_prompt;"
            " unknown fields (store, max_completion_tokens, reasoning_content) are 422"
            ' "Extra inputs are not permitted"',
            "Mistral: 'Tool call id was X but must be a-z, A-Z, 0-9, with a length of 9'"
            " (mistral-common validator)",
            "Mistral streams: no stream_options; usage comes in the last chunk",
            "Mistral reasoning models: content is a list of text and thinking chunks",
            "Mistral embeddings: output_dimension (not dimensions)",
        ),
    ),
    Preset(
        "ollama",
        "Ollama (OpenAI-compatible /v1)",
        "http://localhost:11434/v1",
        auth="optional",
        needs_key=False,
        endpoints=CHAT_EMBED,
        sources=(
            "docs.ollama.com/api/openai-compatibility: /v1/chat/completions and"
            " /v1/embeddings; the API key is required by SDKs but ignored by Ollama",
        ),
    ),
    Preset(
        "groq",
        "Groq",
        "https://api.groq.com/openai/v1",
        request=RequestQuirks(
            drop_fields=("logprobs", "top_logprobs", "logit_bias"),
            single_choice=True,
            history_reasoning=False,
        ),
        reply=ReplyQuirks(reasoning_keys=("reasoning",), usage_paths=(("x_groq", "usage"),)),
        sources=(
            "console.groq.com/docs/openai: logprobs, logit_bias, top_logprobs and"
            " messages[].name are 400; if n is supplied it must be 1",
            "console.groq.com/docs/reasoning: reasoning comes in message.reasoning (delta"
            " .reasoning when streamed); a past assistant turn's reasoning_content is a 400"
            " (\"property 'reasoning_content' is unsupported\")",
            "Groq streams report usage under x_groq.usage in the last chunk (groq SDK"
            " ChatCompletionChunk.x_groq)",
        ),
    ),
    Preset(
        "xai",
        "xAI (Grok)",
        "https://api.x.ai/v1",
        request=RequestQuirks(model_only_fields=(("reasoning_effort", XAI_EFFORT_MODELS),)),
        sources=(
            "docs.x.ai: OpenAI-compatible Chat Completions at https://api.x.ai/v1",
            "docs.x.ai reasoning guide: reasoning_effort is taken by grok-3-mini(-fast),"
            " grok-4.3 and grok-4.20-multi-agent only; grok-3, grok-4, grok-4-fast,"
            " grok-4-1-fast, grok-code-fast answer 400 'Model X does not support parameter"
            " reasoningEffort.' (they reason without the dial)",
        ),
    ),
    Preset(
        "together",
        "Together AI",
        "https://api.together.xyz/v1",
        endpoints=CHAT_EMBED,
        sources=("docs.together.ai: OpenAI-compatible at https://api.together.xyz/v1",),
    ),
    Preset(
        "fireworks",
        "Fireworks AI",
        "https://api.fireworks.ai/inference/v1",
        endpoints=CHAT_EMBED,
        sources=("docs.fireworks.ai: OpenAI-compatible at https://api.fireworks.ai/inference/v1",),
    ),
    Preset(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        request=RequestQuirks(thinking="openrouter"),
        reply=ReplyQuirks(reasoning_keys=("reasoning",)),
        header_options=(("http_referer", "http-referer"), ("x_title", "x-title")),
        sources=(
            "openrouter.ai/docs/app-attribution: optional HTTP-Referer and X-Title headers",
            "openrouter.ai/docs/use-cases/reasoning-tokens: reasoning text comes in the"
            " `reasoning` field of messages and deltas; a request's `reasoning` takes an"
            " effort (reasoning_effort is its shorthand) or max_tokens; effort none turns it off",
        ),
    ),
    Preset(
        "moonshot",
        "Moonshot AI (Kimi)",
        "https://api.moonshot.ai/v1",
        request=RequestQuirks(temperature_max=1.0),
        sources=(
            "platform.moonshot.ai API reference: temperature is in [0, 1] (OpenAI's is [0, 2]);"
            " higher values are clamped to 1, not scaled",
        ),
    ),
    Preset(
        "qwen",
        "Qwen (Alibaba Cloud DashScope, compatible mode)",
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        endpoints=CHAT_EMBED,
        request=RequestQuirks(thinking="qwen", stream_only_thinking=True),
        embeddings_batch_limit=10,
        embeddings_model_limits=(("text-embedding-v1", 25), ("text-embedding-v2", 25)),
        sources=(
            "alibabacloud.com/help/en/model-studio/deep-thinking: enable_thinking (and"
            " thinking_budget) switch hybrid models; reasoning_content beside content;"
            " stream usage only with stream_options.include_usage",
            "DashScope: 400 'parameter.enable_thinking must be set to false for"
            " non-streaming calls' (thinking only in streams)",
            "alibabacloud.com/help/en/model-studio/embedding: text-embedding-v3/v4 take at"
            " most 10 texts per request, v1/v2 25",
        ),
    ),
    Preset(
        "siliconflow",
        "SiliconFlow",
        "https://api.siliconflow.cn/v1",
        endpoints=CHAT_EMBED,
        request=RequestQuirks(thinking="qwen"),
        sources=(
            "docs.siliconflow.cn chat-completions: enable_thinking and thinking_budget"
            " (128..32768) switch reasoning models; reasoning_content beside content",
        ),
    ),
    Preset(
        "vllm",
        "vLLM (self-hosted)",
        "http://localhost:8000/v1",
        auth="optional",
        needs_key=False,
        endpoints=CHAT_EMBED,
        reply=ReplyQuirks(reasoning_keys=("reasoning",)),
        sources=(
            "docs.vllm.ai reasoning outputs: reasoning_content was renamed `reasoning`"
            " (v0.11); a key only when started with --api-key; 422s are FastAPI detail lists",
        ),
    ),
    Preset(
        "lmstudio",
        "LM Studio (local)",
        "http://localhost:1234/v1",
        auth="optional",
        needs_key=False,
        endpoints=CHAT_EMBED,
        sources=("lmstudio.ai/docs: OpenAI-compatible server at http://localhost:1234/v1, no key",),
    ),
)


def preset(kind: str) -> Preset:
    """The preset of `kind` (KeyError if there is none)."""
    for item in PRESETS:
        if item.kind == kind:
            return item
    raise KeyError(kind)
