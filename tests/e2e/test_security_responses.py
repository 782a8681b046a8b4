"""Issue 20 (low): a token limited to some models cannot read, list, continue or delete a
stored Response that another token of the same user made with a model outside its list."""

import openai
import pytest

from switchgate.cli.ops import Ops
from tests.conftest import Gateway
from tests.e2e.test_responses_items import client, raw_list
from tests.support import http_json


def test_stored_responses_follow_the_tokens_model_list(gateway: Gateway) -> None:
    email, full = gateway.new_user()

    async def limited_token(ops: Ops) -> str:
        return (await ops.create_token(email, "only-resp", allowed_models=["gpt-resp"])).token

    limited = gateway.ops(limited_token)
    other_model = client(gateway, full).responses.create(model="gpt-mock", input="secret")
    allowed = client(gateway, full).responses.create(model="gpt-resp", input="fine")
    auth = {"Authorization": f"Bearer {limited}"}
    status, _ = http_json("GET", f"{gateway.url}/v1/responses/{other_model.id}", headers=auth)
    assert status == 404
    assert raw_list(gateway, limited, other_model.id)[0] == 404
    with pytest.raises(openai.NotFoundError):
        client(gateway, limited).responses.delete(other_model.id)
    with pytest.raises(openai.BadRequestError) as unknown:  # as for an unknown id
        client(gateway, limited).responses.create(
            model="gpt-resp", input="go on", previous_response_id=other_model.id
        )
    assert unknown.value.code == "previous_response_not_found"
    # Still there for the token that may use it; the limited token keeps its own model's.
    assert client(gateway, full).responses.retrieve(other_model.id).id == other_model.id
    assert client(gateway, limited).responses.retrieve(allowed.id).id == allowed.id
    assert raw_list(gateway, limited, allowed.id)[0] == 200
