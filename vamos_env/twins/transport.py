"""In-process transports: the official clients reach the twins with no socket.

``TwinStripeHTTPClient`` is a ``stripe.HTTPClient``: hand it to
``stripe.StripeClient(http_client=...)`` and every SDK call becomes a
``Request`` for the billing twin's routes. ``TwinTransport`` is an
``httpx.BaseTransport`` (and async transport) for the Fineract client. Both
keep the wire format intact: the SDK form-encodes, the twin parses the form,
the SDK parses the JSON it gets back. Swapping either for a real network
transport and a real base URL is the only change needed to reach the real
services.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
import stripe

from vamos_env.twins.http import Request, Routes


def _split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.path or "/", parts.query


class TwinStripeHTTPClient(stripe.HTTPClient):
    """A ``stripe.HTTPClient`` that delivers each request to a twin's routes."""

    name = "vamos-twin"

    def __init__(self, routes: Routes) -> None:
        super().__init__()
        self.routes = routes

    def request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None,
        post_data: Any = None,
        *,
        _usage: list[str] | None = None,
    ) -> tuple[str, int, Mapping[str, str]]:
        path, query = _split(url)
        body = post_data.encode() if isinstance(post_data, str) else post_data or b""
        request = Request(
            method.upper(),
            path,
            query,
            {k.lower(): v for k, v in (headers or {}).items()},
            body,
        )
        response = self.routes.handle(request)
        return response.body.decode(), response.status, response.headers

    def request_stream(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None,
        post_data: Any = None,
        *,
        _usage: list[str] | None = None,
    ) -> tuple[Any, int, Mapping[str, str]]:
        import io

        content, status, rheaders = self.request(method, url, headers, post_data)
        return io.BytesIO(content.encode()), status, rheaders

    async def request_async(
        self, method: str, url: str, headers: Mapping[str, str], post_data: Any = None
    ) -> tuple[bytes, int, Mapping[str, str]]:
        content, status, rheaders = self.request(method, url, headers, post_data)
        return content.encode(), status, rheaders

    async def request_stream_async(
        self, method: str, url: str, headers: Mapping[str, str], post_data: Any = None
    ) -> tuple[Any, int, Mapping[str, str]]:
        content, status, rheaders = self.request(method, url, headers, post_data)

        async def chunks() -> Any:
            yield content.encode()

        return chunks(), status, rheaders

    def close(self) -> None:
        return None

    async def close_async(self) -> None:
        return None


def _to_request(request: httpx.Request, body: bytes) -> Request:
    url = request.url
    return Request(
        request.method.upper(),
        url.path,
        url.query.decode(),
        {k.lower(): v for k, v in request.headers.items()},
        body,
    )


class TwinTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport (sync and async) that answers from a twin's routes."""

    def __init__(self, routes: Routes) -> None:
        self.routes = routes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.routes.handle(_to_request(request, request.read()))
        return httpx.Response(response.status, headers=response.headers, content=response.body)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        response = self.routes.handle(_to_request(request, body))
        return httpx.Response(response.status, headers=response.headers, content=response.body)
