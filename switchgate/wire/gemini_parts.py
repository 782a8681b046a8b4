"""Gemini wire parts and spellings, shared by the dialect and the Gemini provider.

Protobuf JSON accepts camelCase and snake_case names, so every reader goes through
`get_field`. Validation failures raise GatewayError(INVALID_REQUEST) with a dotted `param`.
"""

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from switchgate import jsonutil
from switchgate.core.content import (
    AudioPart,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UnknownPart,
)
from switchgate.errors import GatewayError, invalid

SIGNATURE_PREFIX: Final = "gemini:"
_UPPER: Final = re.compile(r"(?<!^)([A-Z])")
_OPENAPI_TYPES: Final = frozenset(
    {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
)
_AUDIO_FORMATS: Final = {"mpeg": "mp3", "mp3": "mp3", "x-wav": "wav", "wave": "wav"}


# ---------------------------------------------------------------- spelling and ids


def camel(name: str) -> str:
    """snake_case -> camelCase (names already in camelCase are returned unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def snake(name: str) -> str:
    return _UPPER.sub(r"_\1", name).lower()


def get_field(obj: Mapping[str, Any], name: str) -> Any:
    """`obj[name]` (camelCase), else the snake_case spelling, else None."""
    value = obj.get(name)
    return obj.get(snake(name)) if value is None else value


def synth_call_id(*keys: object) -> str:
    """A deterministic tool-call id: `call_` + 24 hex characters derived from `keys`."""
    digest = hashlib.sha256("/".join(str(key) for key in keys).encode()).hexdigest()
    return "call_" + digest[:24]


def bare_model(model: str) -> str:
    name = model.removeprefix("models/")
    if not name:
        raise invalid("model is required", param="model")
    return name


# ---------------------------------------------------------------- typed readers


def _wrong(value: Any, where: str, expected: str) -> GatewayError:
    problem = "is required" if value is None else f"must be {expected}"
    return invalid(f"{where} {problem}", param=where)


def as_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _wrong(value, where, "an object")
    return value


def as_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _wrong(value, where, "an array")
    return value


def as_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _wrong(value, where, "a string")
    return value


def as_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise _wrong(value, where, "a boolean")
    return value


def as_int(value: Any, where: str, minimum: int | None = None) -> int:
    """An integer; protobuf JSON also allows 40.0 and "40"."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif (isinstance(value, float) and value.is_integer()) or (
        isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip())
    ):
        number = int(value)
    if number is None:
        raise _wrong(value, where, "an integer")
    if minimum is not None and number < minimum:
        raise invalid(f"{where} must be at least {minimum}", param=where)
    return number


def as_number(value: Any, where: str, low: float | None = None, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(value, where, "a number")
    if low is not None and value < low:
        raise invalid(f"{where} must be at least {low:g}", param=where)
    if high is not None and value > high:
        raise invalid(f"{where} must be at most {high:g}", param=where)
    return float(value)


# ---------------------------------------------------------------- parts


def _media_parts(
    blob: Any, where: str, kind: Literal["inline", "file"]
) -> ImagePart | AudioPart | FilePart:
    blob = as_object(blob, where)
    mime = get_field(blob, "mimeType")
    mime = as_str(mime, f"{where}.mimeType") if mime is not None else None
    if kind == "file":
        uri = as_str(get_field(blob, "fileUri"), f"{where}.fileUri")
        if mime is not None and mime.startswith("image/"):
            return ImagePart(media_type=mime, url=uri)
        return FilePart(media_type=mime, url=uri)
    data = as_str(blob.get("data"), f"{where}.data")
    if mime is None:
        raise invalid(f"{where}.mimeType is required", param=f"{where}.mimeType")
    if mime.startswith("image/"):
        return ImagePart(media_type=mime, data=data)
    if mime.startswith("audio/"):
        sub = mime.split("/", 1)[1].split(";", 1)[0]
        return AudioPart(data=data, format=_AUDIO_FORMATS.get(sub, sub))
    return FilePart(media_type=mime, data=data)


def part_to_core(part: Mapping[str, Any], where: str, model_role: bool, call_id: str) -> list[Part]:
    """One G part (anything but functionResponse) -> IR parts.

    In model turns a `thoughtSignature` is kept as `gemini:<sig>`: on a functionCall it goes
    to ToolCallPart.signature, on a thought to its ThinkingPart, and on a text or empty part
    it becomes an empty ThinkingPart that follows (the Accumulator's shape for a
    SignatureDelta). `call_id` is used for a functionCall without an id.
    """
    raw_sig = get_field(part, "thoughtSignature")
    signature = (
        SIGNATURE_PREFIX + raw_sig if model_role and isinstance(raw_sig, str) and raw_sig else None
    )
    sig_part: list[Part] = [ThinkingPart(signature=signature)] if signature else []
    text = part.get("text")
    if text is not None:
        text = as_str(text, f"{where}.text")
        if model_role and part.get("thought") is True:
            return [ThinkingPart(text=text, signature=signature)] if text or signature else []
        return ([TextPart(text)] if text else []) + sig_part
    call = get_field(part, "functionCall")
    if call is not None:
        call = as_object(call, f"{where}.functionCall")
        name = as_str(call.get("name"), f"{where}.functionCall.name")
        args = call.get("args")
        args = {} if args is None else as_object(args, f"{where}.functionCall.args")
        given = call.get("id")
        call_id = given if isinstance(given, str) and given else call_id
        return [ToolCallPart(call_id, name, jsonutil.dumps_str(args), signature)]
    inline = get_field(part, "inlineData")
    if inline is not None:
        return [_media_parts(inline, f"{where}.inlineData", "inline"), *sig_part]
    file_data = get_field(part, "fileData")
    if file_data is not None:
        return [_media_parts(file_data, f"{where}.fileData", "file"), *sig_part]
    rest = {
        camel(k): v for k, v in part.items() if snake(k) not in ("thought_signature", "thought")
    }
    if rest:
        return [UnknownPart("gemini", rest), *sig_part]
    if sig_part:
        return sig_part
    raise invalid(f"{where} has no data", param=where)


def openapi_to_json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI subset -> JSON Schema: lower-case the upper-case type names."""
    if isinstance(schema, list):
        return [openapi_to_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value in _OPENAPI_TYPES:
            out[key] = value.lower()
        elif key == "type" and isinstance(value, list):
            out[key] = [
                v.lower() if isinstance(v, str) and v in _OPENAPI_TYPES else v for v in value
            ]
        else:
            out[key] = openapi_to_json_schema(value)
    return out


# ---------------------------------------------------------------- IR -> model parts


def gemini_signature(signature: str | None) -> str | None:
    """The bare thoughtSignature if `signature` came from Gemini (`gemini:` prefix), else None."""
    if (
        signature
        and signature.startswith(SIGNATURE_PREFIX)
        and len(signature) > len(SIGNATURE_PREFIX)
    ):
        return signature[len(SIGNATURE_PREFIX) :]
    return None


def function_call_args(arguments: str) -> dict[str, Any]:
    """Tool-call JSON text -> G `args` object; "" is {}, anything else not an object is
    kept (lossily) as {"_raw": text} (protocols §5.4)."""
    if not arguments.strip():
        return {}
    try:
        value = jsonutil.loads(arguments)
    except jsonutil.JSONDecodeError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def function_call_part(part: ToolCallPart) -> dict[str, Any]:
    call: dict[str, Any] = {"name": part.name, "args": function_call_args(part.arguments)}
    if part.id:
        call["id"] = part.id
    out: dict[str, Any] = {"functionCall": call}
    signature = gemini_signature(part.signature)
    if signature:
        out["thoughtSignature"] = signature
    return out


def model_parts(
    parts: Sequence[Part], *, thoughts: Literal["all", "signed", "none"]
) -> list[dict[str, Any]]:
    """IR output parts -> G model parts. Other part kinds are skipped (callers handle them).

    Thought text becomes `{"text", "thought": true}` for `thoughts="all"`, or only when it
    carries a Gemini signature for "signed" (history replay: foreign thoughts are dropped).
    A Gemini signature whose thought text is not emitted goes back onto the preceding text
    part (undoing what decode does), or becomes a `{"text": "", "thoughtSignature"}` part.
    Redacted thinking and non-Gemini signatures have no G form and are dropped.
    """
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                out.append({"text": part.text})
        elif isinstance(part, ToolCallPart):
            out.append(function_call_part(part))
        elif isinstance(part, ThinkingPart) and part.redacted is None:
            signature = gemini_signature(part.signature)
            if part.text and (thoughts == "all" or (thoughts == "signed" and signature)):
                thought: dict[str, Any] = {"text": part.text, "thought": True}
                if signature:
                    thought["thoughtSignature"] = signature
                out.append(thought)
            elif signature:
                last = out[-1] if out else None
                if (
                    last
                    and "text" in last
                    and not last.get("thought")
                    and "thoughtSignature" not in last
                ):
                    last["thoughtSignature"] = signature
                else:
                    out.append({"text": "", "thoughtSignature": signature})
    return out
