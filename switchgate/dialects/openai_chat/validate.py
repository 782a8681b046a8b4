"""Field checks that fail the way OpenAI does: 400 `invalid_request_error`, `param` naming the
field, and OpenAI's codes (`missing_required_parameter`, `invalid_type`, `invalid_value`,
`integer_below_min_value`, `decimal_above_max_value`, ...). `null` counts as absent."""

import re
from collections.abc import Sequence
from typing import Any, Final, Literal, overload

from switchgate.core.request import ToolSpec
from switchgate.errors import GatewayError, invalid


def _path(key: str, prefix: str | None) -> str:
    return f"{prefix}.{key}" if prefix else key


def describe(value: Any) -> str:
    """OpenAI's wording for a JSON value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def missing(param: str) -> GatewayError:
    return invalid(
        f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
    )


def type_error(param: str, expected: str, value: Any) -> GatewayError:
    return invalid(
        f"Invalid type for '{param}': expected {expected}, but got {describe(value)} instead.",
        param=param,
        code="invalid_type",
    )


def value_error(param: str, value: Any, allowed: Sequence[str]) -> GatewayError:
    supported = ", ".join(f"'{a}'" for a in allowed)
    return invalid(
        f"Invalid value: '{value}'. Supported values are: {supported}.",
        param=param,
        code="invalid_value",
    )


@overload
def string_field(
    container: dict[str, Any], key: str, required: Literal[True], prefix: str | None = None
) -> str: ...


@overload
def string_field(
    container: dict[str, Any], key: str, required: bool = False, prefix: str | None = None
) -> str | None: ...


def string_field(
    container: dict[str, Any], key: str, required: bool = False, prefix: str | None = None
) -> str | None:
    value = container.get(key)
    if value is None:
        if required:
            raise missing(_path(key, prefix))
        return None
    if not isinstance(value, str):
        raise type_error(_path(key, prefix), "a string", value)
    return value


def bool_field(container: dict[str, Any], key: str, prefix: str | None = None) -> bool | None:
    value = container.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise type_error(_path(key, prefix), "a boolean", value)


def int_field(container: dict[str, Any], key: str, minimum: int | None) -> int | None:
    value = container.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise type_error(key, "an integer", value)
    if minimum is not None and value < minimum:
        raise invalid(
            f"Invalid '{key}': integer below minimum value. Expected a value >= {minimum}, "
            f"but got {value} instead.",
            param=key,
            code="integer_below_min_value",
        )
    return value


def number_field(container: dict[str, Any], key: str, low: int, high: int) -> float | None:
    value = container.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise type_error(key, "a number", value)
    for bad, side, sign, bound, code in (
        (value < low, "below minimum", ">=", low, "decimal_below_min_value"),
        (value > high, "above maximum", "<=", high, "decimal_above_max_value"),
    ):
        if bad:
            raise invalid(
                f"Invalid '{key}': decimal {side} value. Expected a value {sign} {bound}, "
                f"but got {value} instead.",
                param=key,
                code=code,
            )
    return float(value)


TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


def function_spec(function: dict[str, Any], p: str) -> ToolSpec:
    """A function tool as OpenAI's Chat Completions and Responses APIs declare it (name,
    description, JSON-schema parameters, strict), validated with OpenAI's own messages."""
    name = string_field(function, "name", required=True, prefix=p)
    if not TOOL_NAME.fullmatch(name):
        raise invalid(
            f"Invalid '{p}.name': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$' with at most 64 characters.",
            param=f"{p}.name",
            code="invalid_value",
        )
    parameters = function.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise type_error(f"{p}.parameters", "an object", parameters)
    return ToolSpec(
        name=name,
        description=string_field(function, "description", prefix=p),
        parameters=parameters,
        strict=bool_field(function, "strict", prefix=p),
    )
