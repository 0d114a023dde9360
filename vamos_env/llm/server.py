"""A llama.cpp server on loopback, in this process, speaking the OpenAI chat-completions API.

``xllamacpp`` (the ``local-llm`` extra) is llama.cpp's own HTTP server compiled into a
Python module: ``LocalServer.start(settings)`` loads a GGUF and serves ``/v1/chat/
completions`` (tool calls, ``response_format`` with a JSON schema, streaming),
``/v1/models`` and ``/health`` at ``http://127.0.0.1:PORT/v1`` until the process ends.
Every client reaches it with the official ``openai`` SDK, exactly as any other
OpenAI-compatible server; the model is named ``local``.

``ensure_local_server()`` is what the ``local`` stack, the local caller, verifier and
judge call: it reuses a server that already answers at the local URL (``vamos llm serve``
in another terminal, or one started earlier in this process) and otherwise starts one
here with the default settings, so one model in memory serves every role.

Decisions:

- **Loopback only.** The server has no key and is a test double of a vendor endpoint.
- **Slots.** Two slots by default, so the agent and the caller of one call each keep their
  conversation's KV cache (a slot serves the request whose prompt it shares most of);
  the server's RAM prompt cache (``cache_ram_mib``) keeps more prefixes for later calls.
  A follow-up turn therefore costs only its new tokens, if the system prompt and tools are
  byte-identical from call to call (they are; see docs/llm.md).
- **A reply's length is capped** (``max_reply_tokens``, 4,096): llama.cpp's default is no
  limit but the context, which for a runaway reply is minutes of generation on a CPU.
- **Chat template.** The GGUF's embedded template is used, corrected where it is known to
  mislead the model (``corrected_template``), or a file given with ``--chat-template``.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vamos_env.llm.gguf import chat_template

LOCAL_MODEL = "local"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
# What the local roles read to find a server started elsewhere.
BASE_URL_VARIABLE = "VAMOS_LOCAL_LLM_URL"
# Qwen2.5's embedded template writes the tool-call example inside a string literal with
# doubled braces, so the model is shown ``{{"name": ...}}`` and sometimes answers in kind.
_DOUBLED = '{{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}}'
_SINGLE = '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}'


def default_threads(variable: str = "VAMOS_LLM_THREADS") -> int:
    """``VAMOS_LLM_THREADS`` (generation), else every CPU. On a machine other work keeps
    busy, fewer threads can be faster: llama.cpp's threads wait for each other at every
    generated token."""
    raw = os.environ.get(variable, "")
    if raw.strip():
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise LocalServerError(f"expected {variable} to be a whole number >= 1, got {raw!r}")
        return value
    return os.cpu_count() or 1


def default_batch_threads() -> int:
    """``VAMOS_LLM_BATCH_THREADS`` (reading a prompt), else every CPU. A prompt is read in
    batches of hundreds of tokens, so threads wait for each other once per batch, not
    once per token: every core helps there even where generation is best on one."""
    return default_threads("VAMOS_LLM_BATCH_THREADS")


class LocalServerError(RuntimeError):
    """The local server could not be started or reached; the message says why."""


def corrected_template(template: str) -> str | None:
    """The template with its known flaw fixed, or None when it has none."""
    if _DOUBLED in template:
        return template.replace(_DOUBLED, _SINGLE)
    return None


@dataclass(frozen=True)
class ServerSettings:
    """How to serve one GGUF. ``model`` None: the shipped default, joined and verified."""

    model: Path | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    threads: int = field(default_factory=lambda: default_threads())
    batch_threads: int = field(default_factory=default_batch_threads)
    context: int = 16384  # tokens per slot
    slots: int = 2
    cache_ram_mib: int = 2048
    # The most tokens one reply may have, whatever the request asks (llama.cpp's n_predict):
    # a reply that runs away (a small model under a grammar can write spaces until the
    # context is full) ends here, cut, and the caller of the request sees it cut.
    max_reply_tokens: int = 4096
    chat_template: str | None = None  # None: the embedded one, corrected if need be
    verbose: bool = False  # llama.cpp's log (every request, slot and timing) on stderr

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


def local_base_url() -> str:
    """Where the local roles look for the server: ``VAMOS_LOCAL_LLM_URL`` or the default."""
    return os.environ.get(BASE_URL_VARIABLE) or ServerSettings().base_url


def answers(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when an OpenAI-compatible server at ``base_url`` lists the ``local`` model."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=timeout_s) as r:
            listed = json.loads(r.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False
    models = listed.get("data") if isinstance(listed, dict) else None
    return isinstance(models, list) and any(
        isinstance(m, dict) and m.get("id") == LOCAL_MODEL for m in models
    )


@dataclass
class LocalServer:
    """A running in-process server; it lives until ``stop`` or the end of the process."""

    settings: ServerSettings
    model_path: Path
    load_s: float
    template_note: str
    _handle: Any = None

    @property
    def base_url(self) -> str:
        return self.settings.base_url

    @classmethod
    def start(cls, settings: ServerSettings | None = None) -> LocalServer:
        settings = settings or ServerSettings()
        if settings.host not in ("127.0.0.1", "localhost", "::1"):
            raise LocalServerError(f"expected a loopback host, got {settings.host!r}")
        try:
            import xllamacpp
        except ImportError as exc:
            raise LocalServerError(
                "the local server needs the local-llm extra: pip install 'vamos-env[local-llm]'"
            ) from exc
        from vamos_env.llm.weights import materialise

        path = settings.model or materialise()
        if not path.is_file():
            raise LocalServerError(f"expected a GGUF file at {path}, got nothing there")
        template, note = _template_for(path, settings.chat_template)
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = LOCAL_MODEL
        params.hostname = settings.host
        params.port = settings.port
        params.n_parallel = settings.slots
        params.n_ctx = settings.context * settings.slots
        params.cpuparams.n_threads = settings.threads
        params.cpuparams_batch.n_threads = settings.batch_threads
        params.cache_ram_mib = settings.cache_ram_mib
        params.n_predict = settings.max_reply_tokens
        params.use_jinja = True
        if not settings.verbose:
            params.verbosity = -1  # below llama.cpp's info level: its per-request log is silenced
        params.endpoint_props = True
        params.endpoint_metrics = True
        if template is not None:
            params.chat_template = template
        started = time.perf_counter()
        # llama.cpp installs SIGINT/SIGTERM handlers of its own that do not end the process
        # (a `timeout` around pytest could not stop it); the process's own ones are put back.
        saved = _signal_handlers()
        try:
            handle = xllamacpp.Server(params)
        except Exception as exc:  # a bad file, a port in use: the C++ side raises RuntimeError
            raise LocalServerError(
                f"llama.cpp could not serve {path} on {settings.host}:{settings.port}: {exc}"
            ) from exc
        finally:
            _restore(saved)
        load_s = time.perf_counter() - started
        server = cls(settings, path, load_s, note, handle)
        if not _wait_until_answering(server.base_url, 30.0):
            raise LocalServerError(
                f"expected the server to answer at {server.base_url}, got no answer"
            )
        return server

    def stop(self) -> None:
        self._handle = None  # the extension stops the HTTP server when its object goes


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore(saved: dict[int, Any]) -> None:
    for sig, handler in saved.items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def _template_for(path: Path, override: str | None) -> tuple[str | None, str]:
    if override is not None:
        return override, "the template given with --chat-template"
    embedded = chat_template(path)
    if embedded is None:
        return None, "llama.cpp's default template (the file embeds none)"
    fixed = corrected_template(embedded)
    if fixed is not None:
        return fixed, "the embedded template, its doubled-brace tool-call example corrected"
    return None, "the embedded template"


def _wait_until_answering(base_url: str, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if answers(base_url, 1.0):
            return True
        time.sleep(0.2)
    return False


_started: LocalServer | None = None
_lock = threading.Lock()


def started_here() -> LocalServer | None:
    """The server ``ensure_local_server`` started in this process, if it started one."""
    return _started


def ensure_local_server(settings: ServerSettings | None = None) -> str:
    """The base URL of a server for the ``local`` model, started here if none answers."""
    global _started
    with _lock:
        url = settings.base_url if settings is not None else local_base_url()
        if _started is not None and _started.base_url == url:
            return url
        if answers(url):
            return url
        if settings is None and os.environ.get(BASE_URL_VARIABLE):
            raise LocalServerError(
                f"expected a server for the local model at {BASE_URL_VARIABLE}={url}, got no answer"
            )
        _started = LocalServer.start(settings)
        return _started.base_url
