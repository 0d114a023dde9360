"""A local server speaking OpenAI's chat-completions wire protocol, for the LLM grader tests.

``FakeChatServer`` listens on 127.0.0.1 (a free port) and answers
``POST /v1/chat/completions`` with a ``chat.completion`` object whose message content is
whatever ``reply(request_body)`` returns (a string), or an HTTP error when it returns
``(status, error_body)``. Requests are kept in ``requests`` for assertions. The official
SDK talks to it over a real socket: nothing in the SDK is patched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], "str | tuple[int, dict[str, Any]]"]


class FakeChatServer:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                answer = server.reply(body)
                if isinstance(answer, tuple):
                    self._send(*answer)
                    return
                self._send(200, completion(body.get("model", "?"), answer))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A short poll interval: shutdown() waits for it, and tests start many servers.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def completion(model: str, content: str) -> dict[str, Any]:
    """A chat.completion object as OpenAI sends it; usage counts words as tokens."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1789000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": len(content.split()),
            "total_tokens": 1000 + len(content.split()),
        },
    }


def user_text(request: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content")) for m in request.get("messages", []) if m.get("role") == "user"
    )
