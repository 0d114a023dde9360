"""The ``local`` model in every role: agent stack, caller, verifier and judge.

Each is the OpenAI-compatible code path every other server uses (``OpenAIAgent``,
``OpenAICaller``, ``ModelEndpoint``) with the model named ``local`` and the base URL of
the local server, which ``ensure_local_server`` starts in this process if none answers
(``VAMOS_LOCAL_LLM_URL`` points at one started elsewhere). Nothing else differs, so a
quirk the local server shows is one every OpenAI-compatible server may show.

Sampling defaults to temperature 0 with a fixed seed for the agent and the grader roles,
so a call with a scripted caller replays; the caller keeps a little temperature (0.3) so
that repeats of a task are not identical, seeded per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vamos_env.agents.openai_agent import OpenAIAgent
from vamos_env.llm.server import LOCAL_MODEL, LocalServerError, ensure_local_server

# The server takes no key; the SDK insists on one.
API_KEY = "local"
# A 1.5B model on two idle cores reads the 4,400-token prompt and tools in about two minutes;
# on a busy machine it has taken more than ten.
REQUEST_TIMEOUT_S = 1800.0


class LocalAgent(OpenAIAgent):
    """The ``local`` stack: ``OpenAIAgent`` on the local server (options as ``OpenAIAgent``)."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("model", LOCAL_MODEL)
        options.setdefault("base_url", ensure_local_server())
        options.setdefault("api_key", API_KEY)
        options.setdefault("temperature", 0.0)
        options.setdefault("seed", 0)
        options.setdefault("timeout", REQUEST_TIMEOUT_S)
        options.setdefault("max_retries", 0)  # a retry would only queue behind the first try
        super().__init__(**options)

    def reset(self, info: Mapping[str, Any]) -> None:
        super().reset(info)
        self.tools = [portable_patterns(tool) for tool in self.tools]

    @classmethod
    def preflight(cls, environ: Mapping[str, str]) -> str | None:
        """Start (or find) the server before the run, so a missing extra fails in a second."""
        try:
            ensure_local_server()
        except LocalServerError as exc:
            return str(exc)
        return None


def portable_patterns(schema: Any) -> Any:
    """The schema with ``\\d`` in its ``pattern`` strings written ``[0-9]``.

    llama.cpp turns a request's tool schemas into a grammar for the tool-call arguments,
    and its converter (build 7827) refuses the ``\\d`` class with "unknown escape": the
    grammar fails and the model writes the arguments unconstrained. ``[0-9]`` means the same
    in ECMA-262 regexes for these ASCII identifiers, and the rewrite is the same on every call,
    so the prompt stays byte-stable for the prompt cache.
    """
    if isinstance(schema, dict):
        return {
            key: value.replace("\\d", "[0-9]")
            if key == "pattern" and isinstance(value, str)
            else portable_patterns(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [portable_patterns(item) for item in schema]
    return schema


def caller_options(options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``OpenAICaller`` options for the local model (the caller's own options win)."""
    merged: dict[str, Any] = {
        "model": LOCAL_MODEL,
        "api_key": API_KEY,
        "temperature": 0.3,
        "timeout": REQUEST_TIMEOUT_S,
        "max_retries": 0,
    }
    merged.update(options or {})
    if "base_url" not in merged:
        merged["base_url"] = ensure_local_server()
    return merged


def grader_endpoint(model: str, base_url: str | None) -> Any:
    """The verifier's or judge's ``ModelEndpoint``; ``local`` without a URL: the local server."""
    from vamos_env.grading.llm import ModelEndpoint

    if model != LOCAL_MODEL:
        return ModelEndpoint(model=model, base_url=base_url)
    return ModelEndpoint(
        model=model,
        base_url=base_url or ensure_local_server(),
        api_key=API_KEY,
        timeout_s=REQUEST_TIMEOUT_S,
        max_retries=0,
    )
