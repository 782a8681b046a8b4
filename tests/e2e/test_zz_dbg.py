import json
from google.genai import types
from tests.e2e.test_openai_media import genai_client
from tests.support import mock_requests, clear_mock_requests
def test_dbg(gateway):
    email, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    sdk = genai_client(gateway, token)
    result = sdk.models.embed_content(model="gemini-embed", contents=["first document", "second one here"], config=types.EmbedContentConfig(output_dimensionality=4))
    print(result)
    print(json.dumps(mock_requests(gateway.mock_url), indent=1)[:3000])
