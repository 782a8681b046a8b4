"""`GET /v1/responses/{id}/input_items` and `POST /v1/responses/{id}/cancel` end to end: the
official openai SDK against the real gateway, on responses passed through natively
(gpt-resp) and translated to chat (gpt-mock); every listed item checked against the SDK's
own `ResponseItem` / `ResponseItemList` types."""

from typing import Any

import openai
import pytest
from openai.types.responses import ResponseItem
from openai.types.responses.response_item_list import ResponseItemList
from pydantic import TypeAdapter

from tests.conftest import Gateway
from tests.support import clear_mock_requests, http_json, mock_requests

MODELS = ["gpt-mock", "gpt-resp"]
ITEM: TypeAdapter[Any] = TypeAdapter(ResponseItem)
INPUT: list[Any] = [
    {"role": "developer", "content": "Answer briefly."},
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "first answer"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]},
    {"role": "user", "content": "third question"},
]


def client(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def raw_list(gw: Gateway, token: str, response_id: str, query: str = "") -> tuple[int, Any]:
    return http_json(
        "GET",
        f"{gw.url}/v1/responses/{response_id}/input_items{query}",
        headers={"Authorization": f"Bearer {token}"},
    )


def texts(items: list[Any]) -> list[str]:
    out: list[str] = []
    for item in items:
        data = item if isinstance(item, dict) else item.model_dump()
        out.extend(part["text"] for part in data.get("content") or [] if "text" in part)
    return out


@pytest.mark.parametrize("model", MODELS)
def test_input_items_list_pages_like_openai(gateway_any: Gateway, model: str) -> None:
    _, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    created = sdk.responses.create(model=model, input=INPUT)
    status, body = raw_list(gateway_any, token, created.id)
    assert status == 200
    listed = ResponseItemList.model_validate(body)  # the SDK's own list type
    for item in body["data"]:
        ITEM.validate_python(item)
    assert body["object"] == "list" and body["has_more"] is False
    # default order: desc (newest first)
    expected = ["Answer briefly.", "first question", "first answer", "second", "third question"]
    assert texts(body["data"]) == expected[::-1]
    ids = [item.id for item in listed.data][::-1]  # ascending
    assert (listed.first_id, listed.last_id) == (ids[-1], ids[0])
    assert len(set(ids)) == 5 and all(i.startswith("msg_") for i in ids)
    assert body["data"][0]["content"] == [{"type": "input_text", "text": "third question"}]
    assert body["data"][2]["role"] == "assistant"
    assert body["data"][2]["content"][0]["type"] == "output_text"

    page = sdk.responses.input_items.list(created.id)
    assert [item.id for item in page.data] == ids[::-1]  # stable ids, same as above
    # auto-pagination with a small limit walks every page, in the order asked for
    first = sdk.responses.input_items.list(created.id, limit=2, order="asc")
    assert [item.id for item in first.data] == ids[:2] and first.has_more is True
    assert [item.id for item in first] == ids
    assert [item.id for item in sdk.responses.input_items.list(created.id, limit=2)] == ids[::-1]
    after = sdk.responses.input_items.list(created.id, order="asc", after=ids[1], limit=2)
    assert [item.id for item in after.data] == ids[2:4] and after.has_more is True
    last = sdk.responses.input_items.list(created.id, order="desc", after=ids[1])
    assert [item.id for item in last.data] == [ids[0]] and last.has_more is False
    included = sdk.responses.input_items.list(created.id, include=["reasoning.encrypted_content"])
    assert [item.id for item in included.data] == ids[::-1]


@pytest.mark.parametrize("model", MODELS)
def test_continued_response_lists_the_whole_input_context(gateway_any: Gateway, model: str) -> None:
    _, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    first = sdk.responses.create(model=model, input="one")
    second = sdk.responses.create(model=model, previous_response_id=first.id, input="two")
    clear_mock_requests(gateway_any.mock_url)
    third = sdk.responses.create(
        model=model, previous_response_id=second.id, input="three", stream=False
    )
    first_items = list(sdk.responses.input_items.list(first.id, order="asc"))
    third_items = list(sdk.responses.input_items.list(third.id, order="asc", limit=1))
    for item in third_items:
        ITEM.validate_python(item.model_dump(warnings=False, exclude_none=True))
    assert texts(third_items) == ["one", first.output_text, "two", second.output_text, "three"]
    ids = [item.id for item in third_items]
    # earlier items keep their ids: the first input's, and the output items' own
    assert ids[0] == first_items[0].id
    assert ids[1] == first.output[0].id and ids[3] == second.output[0].id
    # ids the gateway made up are listed, never sent upstream
    upstream = mock_requests(gateway_any.mock_url)[-1]["json"]
    sent = upstream.get("input") or upstream.get("messages")
    assert not any(isinstance(m, dict) and m.get("id") in (ids[0], ids[2]) for m in sent)


def test_input_items_are_scoped_to_their_user(gateway_any: Gateway) -> None:
    _, token = gateway_any.new_user()
    _, other = gateway_any.new_user()
    created = client(gateway_any, token).responses.create(model="gpt-mock", input="mine")
    status, missing = http_json(
        "GET",
        f"{gateway_any.url}/v1/responses/{created.id}",
        headers={"Authorization": f"Bearer {other}"},
    )
    assert status == 404
    for response_id in (created.id, "resp_unknown"):
        assert raw_list(gateway_any, other, response_id) == (
            404,
            {
                "error": {
                    **missing["error"],
                    "message": f"No response found with id '{response_id}'.",
                }
            },
        )
    with pytest.raises(openai.NotFoundError):
        client(gateway_any, other).responses.input_items.list(created.id)
    with pytest.raises(openai.NotFoundError):
        client(gateway_any, other).responses.cancel(created.id)
    assert raw_list(gateway_any, token, created.id)[0] == 200
    client(gateway_any, token).responses.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        client(gateway_any, token).responses.input_items.list(created.id)


@pytest.mark.parametrize("model", MODELS)
def test_cancel_a_synchronous_response_is_refused_like_openai(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    created = sdk.responses.create(model=model, input="done already")
    with pytest.raises(openai.BadRequestError) as info:
        sdk.responses.cancel(created.id)
    assert info.value.status_code == 400
    assert info.value.body == {
        "message": "Cannot cancel a synchronous response.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    with pytest.raises(openai.NotFoundError):
        sdk.responses.cancel("resp_unknown")
    assert sdk.responses.retrieve(created.id).status == "completed"  # untouched


@pytest.mark.parametrize("model", MODELS)
def test_background_is_refused_on_every_channel(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    with pytest.raises(openai.BadRequestError) as info:
        client(gateway, token).responses.create(model=model, input="later", background=True)
    assert info.value.body["param"] == "background"  # type: ignore[index]
    assert info.value.body["code"] == "unsupported_value"  # type: ignore[index]
    assert mock_requests(gateway.mock_url) == []  # nothing reached the upstream
    plain = client(gateway, token).responses.create(model=model, input="now", background=False)
    assert plain.status == "completed"


def test_bad_list_parameters_and_paths(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    created = sdk.responses.create(model="gpt-mock", input="x", store=True)
    for query, param in [
        ("?limit=0", "limit"),
        ("?limit=101", "limit"),
        ("?limit=many", "limit"),
        ("?order=sideways", "order"),
        ("?after=msg_nope", "after"),
    ]:
        status, body = raw_list(gateway, token, created.id, query)
        assert status == 400 and body["error"]["param"] == param, query
        assert body["error"]["type"] == "invalid_request_error"
    assert raw_list(gateway, token, created.id, "?limit=100&order=asc")[0] == 200
    auth = {"Authorization": f"Bearer {token}"}
    for method, path in [
        ("POST", f"{created.id}/input_items"),
        ("GET", f"{created.id}/cancel"),
        ("GET", f"{created.id}/nothing"),
        ("GET", f"{created.id}/input_items/more"),
    ]:
        status, _ = http_json(method, f"{gateway.url}/v1/responses/{path}", headers=auth)
        assert status == 404, (method, path)
    assert raw_list(gateway, "sk-wrong", created.id)[0] == 401
    forgotten = sdk.responses.create(model="gpt-mock", input="x", store=False)
    assert raw_list(gateway, token, forgotten.id)[0] == 404
