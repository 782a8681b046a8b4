"""Validation of the OpenAI media JSON bodies (protocols §2.1-2.6). Lenient on input
(unknown fields are kept for passthrough), strict on what the gateway itself relies on:
the model, what is billed, and what a translation needs. Errors are 400s naming `param`."""

from dataclasses import dataclass
from typing import Any, Final, Literal

from switchgate.core.rerank import RerankRequest
from switchgate.errors import invalid

MAX_EMBEDDING_INPUTS: Final = 2048
MAX_IMAGES: Final = 10
IMAGE_FORMATS: Final = ("url", "b64_json")

Prompt = str | tuple[int, ...]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def model_of(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise invalid("you must provide a model parameter", param="model")
    return model


def optional_int(body: dict[str, Any], name: str, low: int, high: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not is_int(value) or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise invalid(f"'{name}' must be an integer {bound}.", param=name)
    return int(value)


def optional_str(body: dict[str, Any], name: str, choices: tuple[str, ...] = ()) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or (choices and value not in choices):
        allowed = f" (one of {', '.join(choices)})" if choices else ""
        raise invalid(f"'{name}' must be a string{allowed}.", param=name)
    return value


def _token_list(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list) and value and all(is_int(v) and v >= 0 for v in value):
        return tuple(value)
    return None


def prompts_of(value: Any, param: str, allow_empty_text: bool) -> list[Prompt]:
    """str | [str] | [int] | [[int]] -> a list of texts and token tuples."""
    if isinstance(value, str):
        if not value and not allow_empty_text:
            raise invalid(f"'{param}' must not be empty.", param=param)
        return [value]
    single = _token_list(value)
    if single is not None:
        return [single]
    if not isinstance(value, list) or not value:
        raise invalid(
            f"'{param}' must be a string, an array of strings, or token arrays.", param=param
        )
    out: list[Prompt] = []
    for item in value:
        tokens = _token_list(item)
        if isinstance(item, str) and (item or allow_empty_text):
            out.append(item)
        elif tokens is not None:
            out.append(tokens)
        else:
            raise invalid(
                f"'{param}' items must be non-empty strings or token arrays.", param=param
            )
    return out


def prompt_size(prompt: Prompt) -> int:
    """An upper bound of the tokens in a prompt (BPE never makes more tokens than bytes)."""
    return len(prompt) if isinstance(prompt, tuple) else len(prompt.encode())


# ---------------------------------------------------------------- completions


@dataclass(frozen=True, slots=True)
class CompletionsRequest:
    model: str
    prompts: list[Prompt]
    stream: bool
    wants_usage: bool  # the client itself asked for the stream's usage chunk
    max_tokens: int | None
    choices: int  # completions generated per prompt (max of n and best_of)


def parse_completions(body: dict[str, Any]) -> CompletionsRequest:
    model = model_of(body)
    raw = body.get("prompt")
    prompts: list[Prompt] = [""] if raw is None else prompts_of(raw, "prompt", True)
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise invalid("'stream' must be a boolean.", param="stream")
    options = body.get("stream_options")
    wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    max_tokens = optional_int(body, "max_tokens", 0)
    n = optional_int(body, "n", 1, 128) or 1
    best_of = optional_int(body, "best_of", 1, 128) or 1
    choices = max(n, best_of)
    return CompletionsRequest(model, prompts, stream is True, wants_usage, max_tokens, choices)


# ---------------------------------------------------------------- embeddings


@dataclass(frozen=True, slots=True)
class EmbeddingsRequest:
    model: str
    inputs: list[Prompt]
    encoding_format: Literal["float", "base64"]
    dimensions: int | None


def parse_embeddings(body: dict[str, Any]) -> EmbeddingsRequest:
    model = model_of(body)
    if "input" not in body:
        raise invalid("'input' is a required property.", param="input")
    inputs = prompts_of(body["input"], "input", allow_empty_text=False)
    if len(inputs) > MAX_EMBEDDING_INPUTS:
        raise invalid(f"'input' may hold at most {MAX_EMBEDDING_INPUTS} items.", param="input")
    fmt = optional_str(body, "encoding_format", ("float", "base64"))
    dimensions = optional_int(body, "dimensions", 1)
    return EmbeddingsRequest(model, inputs, "base64" if fmt == "base64" else "float", dimensions)


# ---------------------------------------------------------------- images


@dataclass(frozen=True, slots=True)
class ImageRequest:
    model: str
    prompt: str
    n: int
    size: str | None
    quality: str | None


def image_request(values: dict[str, Any]) -> ImageRequest:
    """From a JSON body, or from a form's fields (strings: `n` may be "2")."""
    model = model_of(values)
    prompt = values.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise invalid("'prompt' is a required property.", param="prompt")
    n_value = values.get("n")
    if isinstance(n_value, str) and n_value.strip().isdigit():
        n_value = int(n_value)
    n = optional_int({"n": n_value}, "n", 1, MAX_IMAGES) or 1
    optional_str(values, "response_format", IMAGE_FORMATS)
    size = optional_str(values, "size")
    quality = optional_str(values, "quality")
    return ImageRequest(model, prompt, n, size, quality)


# ---------------------------------------------------------------- speech


@dataclass(frozen=True, slots=True)
class SpeechRequest:
    model: str
    input: str


def parse_speech(body: dict[str, Any]) -> SpeechRequest:
    model = model_of(body)
    text = body.get("input")
    if not isinstance(text, str) or not text:
        raise invalid("'input' is a required property.", param="input")
    optional_str(body, "response_format")
    return SpeechRequest(model, text)


# ---------------------------------------------------------------- rerank


def _document(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return str(value["text"])
    raise invalid("'documents' items must be strings or {\"text\": ...}.", param="documents")


def parse_rerank(body: dict[str, Any]) -> RerankRequest:
    model = model_of(body)
    query = body.get("query")
    if not isinstance(query, str) or not query:
        raise invalid("'query' is a required property.", param="query")
    documents = body.get("documents")
    if not isinstance(documents, list) or not documents:
        raise invalid("'documents' must be a non-empty array.", param="documents")
    texts = [_document(d) for d in documents]
    top_n = optional_int(body, "top_n", 1)
    wanted = body.get("return_documents")
    if wanted is not None and not isinstance(wanted, bool):
        raise invalid("'return_documents' must be a boolean.", param="return_documents")
    per_doc = optional_int(body, "max_tokens_per_doc", 1)
    return RerankRequest(model, query, texts, top_n, wanted is True, per_doc)
