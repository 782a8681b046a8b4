"""POST /v1/rerank, /rerank and /v2/rerank (protocols §2.6): Cohere-, Jina- and
OpenAI-compatible (`{base}/rerank`) channels, one normalised answer shape (best first).

Billed: `per_request`, plus tokens x the input price, the tokens being the upstream's
`usage.total_tokens` when it reports them, else the tokenizer's count (query once per
document, plus the documents).
"""

from collections.abc import Mapping

from switchgate import jsonutil
from switchgate.billing.media_pricing import input_token_cost
from switchgate.billing.pricing import Price
from switchgate.core.rerank import RerankRequest
from switchgate.core.usage import Usage
from switchgate.dialects.openai_media.requests import parse_rerank
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import RerankProvider
from switchgate.providers.registry import RERANK as _RERANK
from switchgate.providers.registry import ProviderKind
from switchgate.providers.rerank import rerank_reply
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import Delivery, Exchange, MediaEndpoint, handle_media
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.state import AppState


class RerankExchange(Exchange):
    endpoint = _RERANK

    def __init__(self, request: RerankRequest, state: AppState) -> None:
        super().__init__(request.model)
        self.request = request
        self.state = state

    def hold(self, price: Price) -> int:
        request = self.request
        query = len(request.query.encode())
        documents = sum(len(d.encode()) for d in request.documents)
        return input_token_cost(price, query * len(request.documents) + documents + 16)

    def _count(self) -> int:
        count = self.state.tokenizer.count
        request = self.request
        return count(request.query) * len(request.documents) + sum(
            count(d) for d in request.documents
        )

    def accepts(self, kind: ProviderKind) -> bool:
        return kind.rerank() is not None

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        return _reranker(kind).build_rerank_request(self.request, target)

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        reranker = _reranker(delivery.kind)
        result = reranker.parse_rerank_response(await read_all(response), self.request)
        if result.tokens is not None:
            usage = Usage(input_tokens=result.tokens)
        else:
            usage = Usage(input_tokens=self._count(), estimated=True)
        delivery.bill(input_token_cost(delivery.price, usage.input_tokens), usage)
        reply = rerank_reply(result, self.model, usage.input_tokens)
        await delivery.whole(jsonutil.dumps(reply))


def _reranker(kind: ProviderKind) -> RerankProvider:
    reranker = kind.rerank()
    if reranker is None:  # `accepts` keeps such channels out
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, f"{kind.name} channels do not serve rerank")
    return reranker


def _prepare(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    return RerankExchange(parse_rerank(parse_json_object(raw)), state)


RERANK = MediaEndpoint(name="rerank", what="rerank", prepare=_prepare)


async def rerank(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(RERANK, state, scope, receive, send)
