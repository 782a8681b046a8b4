"""/api/openapi.json: the management API described from its route table."""

import re
from typing import Any

from switchgate import __version__
from switchgate.console.api.registry import ApiRoute

_PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")


def _path_and_params(path: str) -> tuple[str, list[dict[str, Any]]]:
    params = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "integer" if kind == "int" else "string"},
        }
        for name, kind in _PARAM.findall(path)
    ]
    return _PARAM.sub(lambda m: "{" + m.group(1) + "}", path), params


def _operation_id(method: str, path: str) -> str:
    return f"{method.lower()}_{re.sub(r'[^a-z0-9]+', '_', path.lower())}".strip("_")


def build(routes: list[ApiRoute]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        path, params = _path_and_params(route.path)
        params += [
            {"name": q, "in": "query", "required": False, "schema": {"type": "string"}}
            for q in route.query
        ]
        operation: dict[str, Any] = {
            "summary": route.summary + (" (admin)" if route.admin else ""),
            "tags": [route.tag],
            "operationId": _operation_id(route.method, path),
            "parameters": params,
            "responses": {
                "200": {"description": "OK", "content": {route.produces: {}}},
                "400": {"$ref": "#/components/responses/Error"},
                "401": {"$ref": "#/components/responses/Error"},
                "403": {"$ref": "#/components/responses/Error"},
            },
        }
        if route.body is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": route.body}},
            }
        paths.setdefault(path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "switchgate management API",
            "version": __version__,
            "description": "Everything the console does. Authenticate with the console's "
            "session cookie plus its CSRF token in the X-CSRF-Token header, or with "
            "`Authorization: Bearer sk-...` of an admin's token. Amounts are USD strings.",
        },
        "servers": [{"url": "/"}],
        "security": [{"adminToken": []}, {"session": [], "csrf": []}],
        "components": {
            "securitySchemes": {
                "adminToken": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "sg_session"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token"},
            },
            "responses": {
                "Error": {
                    "description": "An error",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "error": {
                                        "type": "object",
                                        "properties": {
                                            "message": {"type": "string"},
                                            "code": {"type": "string"},
                                        },
                                    }
                                },
                            }
                        }
                    },
                }
            },
        },
        "paths": paths,
    }
