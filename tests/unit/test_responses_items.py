"""The pure parts of `GET /v1/responses/{id}/input_items`: query parsing, paging, and the
listed form of input items (checked against the openai SDK's own `ResponseItem`)."""

from typing import Any

import pytest
from openai.types.responses import ResponseItem
from openai.types.responses.response_item_list import ResponseItemList
from pydantic import TypeAdapter

from switchgate.errors import GatewayError
from switchgate.relay.routes_responses_items import ListQuery, list_page, parse_list_query
from switchgate.storage.responses_store import _legacy_input_items, listed_item, listed_items

ITEM: TypeAdapter[Any] = TypeAdapter(ResponseItem)
ITEMS = [{"id": f"msg_{i}", "type": "message"} for i in range(5)]


def ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["data"]]


def test_defaults_are_desc_and_twenty() -> None:
    assert parse_list_query(b"") == ListQuery(limit=20, order="desc")
    many = [{"id": f"i{i}"} for i in range(25)]
    page = list_page(many, ListQuery())
    assert ids(page) == [f"i{i}" for i in range(24, 4, -1)]
    assert (page["first_id"], page["last_id"], page["has_more"]) == ("i24", "i5", True)
    assert page["object"] == "list"


def test_asc_and_desc_pages_with_after() -> None:
    page = list_page(ITEMS, ListQuery(limit=2, order="asc"))
    assert ids(page) == ["msg_0", "msg_1"] and page["has_more"] is True
    page = list_page(ITEMS, ListQuery(limit=2, order="asc", after="msg_1"))
    assert ids(page) == ["msg_2", "msg_3"] and page["has_more"] is True
    page = list_page(ITEMS, ListQuery(limit=2, order="asc", after="msg_3"))
    assert ids(page) == ["msg_4"] and page["has_more"] is False
    page = list_page(ITEMS, ListQuery(limit=2, order="desc", after="msg_3"))
    assert ids(page) == ["msg_2", "msg_1"] and page["has_more"] is True
    page = list_page(ITEMS, ListQuery(limit=100, order="asc", after="msg_4"))
    assert page == {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }


def test_before_gives_the_items_closest_to_the_cursor() -> None:
    page = list_page(ITEMS, ListQuery(limit=2, order="asc", before="msg_4"))
    assert ids(page) == ["msg_2", "msg_3"] and page["has_more"] is True
    page = list_page(ITEMS, ListQuery(limit=2, order="asc", before="msg_1"))
    assert ids(page) == ["msg_0"] and page["has_more"] is False
    page = list_page(ITEMS, ListQuery(limit=5, order="asc", after="msg_0", before="msg_4"))
    assert ids(page) == ["msg_1", "msg_2", "msg_3"] and page["has_more"] is False
    page = list_page(ITEMS, ListQuery(order="asc", after="msg_3", before="msg_1"))
    assert ids(page) == []


@pytest.mark.parametrize("param", ["after", "before"])
def test_unknown_cursor_is_a_400_naming_it(param: str) -> None:
    with pytest.raises(GatewayError) as info:
        cursor = ListQuery(after="msg_nope") if param == "after" else ListQuery(before="msg_nope")
        list_page(ITEMS, cursor)
    assert info.value.status == 400 and info.value.param == param


def test_query_parsing() -> None:
    query = parse_list_query(
        b"limit=3&order=asc&after=msg_1&include%5B%5D=reasoning.encrypted_content"
        b"&include=message.input_image.image_url&unknown=1"
    )
    assert query == ListQuery(
        limit=3,
        order="asc",
        after="msg_1",
        include=("reasoning.encrypted_content", "message.input_image.image_url"),
    )
    assert parse_list_query(b"limit=100&before=x").before == "x"


@pytest.mark.parametrize(
    ("query", "param", "code"),
    [
        (b"limit=0", "limit", "integer_below_min_value"),
        (b"limit=101", "limit", "integer_above_max_value"),
        (b"limit=ten", "limit", "invalid_type"),
        (b"order=up", "order", "invalid_value"),
    ],
)
def test_bad_query_values(query: bytes, param: str, code: str) -> None:
    with pytest.raises(GatewayError) as info:
        parse_list_query(query)
    assert (info.value.status, info.value.param, info.value.code) == (400, param, code)


def test_listed_items_have_ids_and_item_form() -> None:
    raw: list[Any] = [
        {"role": "user", "content": "hi"},
        {"role": "developer", "content": [{"type": "input_text", "text": "be nice"}]},
        {"role": "assistant", "content": "hello"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "reasoning", "encrypted_content": "sig"},
        {"id": "msg_keep", "type": "message", "role": "user", "content": "kept"},
    ]
    listed = listed_items(raw, "resp_1")
    for item in listed:
        ITEM.validate_python(item)
    prefixes = [item["id"].split("_")[0] for item in listed]
    assert prefixes == ["msg", "msg", "msg", "msg", "fc", "fco", "rs", "msg"]
    assert listed[7]["id"] == "msg_keep"
    assert listed[0]["content"] == [{"type": "input_text", "text": "hi"}]
    assert listed[2]["content"] == [{"type": "output_text", "text": "hello", "annotations": []}]
    assert len({item["id"] for item in listed}) == len(listed)
    assert listed_items(raw, "resp_1") == listed  # stable
    assert listed_items(raw, "resp_2")[0]["id"] != listed[0]["id"]
    assert [listed_item(item, "other", 0) for item in listed] == listed  # idempotent
    assert raw[0] == {"role": "user", "content": "hi"}  # not mutated


def test_list_object_matches_the_sdk_type() -> None:
    listed = listed_items([{"role": "user", "content": "hi"}], "resp_1")
    ResponseItemList.model_validate(list_page(listed, ListQuery()))


def test_rows_from_before_0004_derive_their_input_items() -> None:
    conversation = [
        {"role": "user", "content": "hi"},
        {"id": "msg_out", "type": "message", "role": "assistant", "content": []},
    ]
    response = {"id": "resp_old", "output": [conversation[1]]}
    derived = _legacy_input_items("resp_old", response, conversation)
    assert derived == listed_items(conversation[:1], "resp_old")
