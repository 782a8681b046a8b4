"""An API route with what the OpenAPI description says about it."""

from dataclasses import dataclass, field
from typing import Any

from switchgate.console.deps import ApiHandler


@dataclass(frozen=True)
class ApiRoute:
    method: str
    path: str  # Starlette form, e.g. /api/tokens/{id:int}
    handler: ApiHandler
    summary: str
    tag: str
    admin: bool = False
    body: dict[str, Any] | None = None  # JSON Schema of the request body
    query: tuple[str, ...] = ()
    produces: str = "application/json"
    extra: dict[str, Any] = field(default_factory=dict)


def obj(*required: str, **props: Any) -> dict[str, Any]:
    """A JSON Schema object with these properties."""
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    return schema


STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
BOOL: dict[str, Any] = {"type": "boolean"}
USD: dict[str, Any] = {"type": "string", "description": 'USD amount, e.g. "1.50"'}
NULLABLE_INT: dict[str, Any] = {"type": ["integer", "null"]}
STR_LIST: dict[str, Any] = {"type": ["array", "null"], "items": {"type": "string"}}
