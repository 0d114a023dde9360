"""Local fake vendor servers for tests and offline development.

``FakeOpenAIServer`` speaks OpenAI's chat-completions protocol and
``FakeGeminiServer`` the Gemini API's ``generateContent``; both listen on
127.0.0.1, answer from a script of vendor-neutral replies (``Reply`` with text and
``Call``s, ``Failure``, ``Raw``), a function of the request, or one script per
conversation (``per_conversation``, for many concurrent calls), can wait a fixed
``delay_s`` before answering, refuse malformed conversations as the vendor does,
and record every request. The official SDKs reach them unpatched through their
base-URL settings.
"""

from __future__ import annotations

from vamos_env.testing.fake_gemini import FakeGeminiServer
from vamos_env.testing.fake_openai import FakeOpenAIServer
from vamos_env.testing.server import Call, Failure, Raw, RecordedRequest, Reply

__all__ = [
    "Call",
    "Failure",
    "FakeGeminiServer",
    "FakeOpenAIServer",
    "Raw",
    "RecordedRequest",
    "Reply",
]
