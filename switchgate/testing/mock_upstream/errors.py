"""Error bodies in each provider's own shape (protocols §1.6, §3.5, §4.5)."""

from typing import Any, Final

from aiohttp import web

from .httpkit import json_response

RETRY_AFTER_STATUSES: Final = frozenset({429, 503, 529})

# status -> (type, code, message)
_OPENAI: Final[dict[int, tuple[str, str | None, str]]] = {
    400: ("invalid_request_error", None, "Invalid request (mock)."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided (mock)."),
    403: ("permission_error", "request_forbidden", "Request forbidden (mock)."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist (mock)."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests (mock)."),
    500: ("server_error", None, "The server had an error while processing your request (mock)."),
    503: ("server_error", None, "The engine is currently overloaded (mock)."),
}

_ANTHROPIC: Final[dict[int, tuple[str, str]]] = {
    400: ("invalid_request_error", "Invalid request (mock)."),
    401: ("authentication_error", "invalid x-api-key (mock)"),
    402: ("billing_error", "Your credit balance is too low (mock)."),
    403: ("permission_error", "Permission denied (mock)."),
    404: ("not_found_error", "Not found (mock)."),
    408: ("timeout_error", "Request timed out (mock)."),
    413: ("request_too_large", "Request exceeds the maximum allowed size (mock)."),
    429: ("rate_limit_error", "Number of requests has exceeded your rate limit (mock)."),
    500: ("api_error", "Internal server error (mock)."),
    504: ("timeout_error", "Request timed out (mock)."),
    529: ("overloaded_error", "Overloaded"),
}

_GEMINI: Final[dict[int, tuple[str, str]]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument (mock)."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials (mock)."),
    403: ("PERMISSION_DENIED", "The caller does not have permission (mock)."),
    404: ("NOT_FOUND", "Requested entity was not found (mock)."),
    409: ("ABORTED", "The operation was aborted (mock)."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (mock)."),
    499: ("CANCELLED", "The operation was cancelled (mock)."),
    500: ("INTERNAL", "An internal error has occurred (mock)."),
    501: ("UNIMPLEMENTED", "Method not implemented (mock)."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later (mock)."),
    504: ("DEADLINE_EXCEEDED", "The request timed out (mock)."),
}


_COHERE: Final[dict[int, str]] = {
    400: "invalid request: the request is not valid (mock).",
    401: "invalid api token",
    402: "Please add or update your payment method to continue (mock).",
    404: "model not found, make sure the correct model ID was used (mock).",
    422: "unprocessable entity (mock).",
    429: "You are using a Trial key, which is limited to 20 API calls / minute (mock).",
    499: "request cancelled (mock).",
    500: "internal server error, this has been reported to our developers (mock).",
    503: "service unavailable (mock).",
}


def _retry_headers(status: int, extra: dict[str, str] | None = None) -> dict[str, str]:
    headers = dict(extra) if extra else {}
    if status in RETRY_AFTER_STATUSES:
        headers["retry-after"] = "1"
    return headers


def openai_error_body(
    status: int, message: str | None = None, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    default = _OPENAI.get(status) or (
        ("server_error", None, "Upstream error (mock).")
        if status >= 500
        else ("invalid_request_error", None, "Request failed (mock).")
    )
    return {
        "error": {
            "message": message or default[2],
            "type": default[0],
            "param": param,
            "code": code if code is not None else default[1],
        }
    }


def openai_error(
    status: int, message: str | None = None, code: str | None = None, param: str | None = None
) -> web.Response:
    headers = {"x-request-id": "req_mock_error"}
    if status == 429:
        headers["x-ratelimit-remaining-requests"] = "0"
    body = openai_error_body(status, message, code, param)
    return json_response(body, status, _retry_headers(status, headers))


def anthropic_error_body(status: int, message: str | None = None) -> dict[str, Any]:
    default = _ANTHROPIC.get(status) or (
        ("api_error", "Upstream error (mock).")
        if status >= 500
        else ("invalid_request_error", "Request failed (mock).")
    )
    return {"type": "error", "error": {"type": default[0], "message": message or default[1]}}


def anthropic_error(status: int, message: str | None = None) -> web.Response:
    body = anthropic_error_body(status, message)
    body["request_id"] = "req_mock_error"
    headers = {"request-id": "req_mock_error"}
    return json_response(body, status, _retry_headers(status, headers))


def gemini_error_body(
    status: int, message: str | None = None, reason: str | None = None
) -> dict[str, Any]:
    default = _GEMINI.get(status) or (
        ("INTERNAL", "Upstream error (mock).")
        if status >= 500
        else ("INVALID_ARGUMENT", "Request failed (mock).")
    )
    error: dict[str, Any] = {"code": status, "message": message or default[1], "status": default[0]}
    details: list[dict[str, Any]] = []
    if reason is not None:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
            }
        )
    if status == 429:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"})
    if details:
        error["details"] = details
    return {"error": error}


def gemini_error(
    status: int, message: str | None = None, reason: str | None = None, as_array: bool = False
) -> web.Response:
    body: Any = gemini_error_body(status, message, reason)
    return json_response([body] if as_array else body, status, _retry_headers(status))


def cohere_error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """Cohere's error body: `{"id", "message"}`."""
    default = _COHERE.get(status) or (
        "upstream error (mock)." if status >= 500 else "invalid request (mock)."
    )
    return {"id": "mock-error-0000", "message": message or default}


def cohere_error(status: int, message: str | None = None) -> web.Response:
    return json_response(cohere_error_body(status, message), status, _retry_headers(status))
