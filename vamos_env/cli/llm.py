"""``vamos llm ...``: the local model server (the ``local-llm`` extra; docs/llm.md).

- ``vamos llm serve [--model PATH] [--port N] ...``: serves a GGUF on loopback through
  llama.cpp's OpenAI-compatible server until Ctrl-C (or SIGTERM). Without ``--model`` it
  serves the shipped Qwen2.5-Coder-1.5B, joined from its chunk wheels into the cache once
  and checked against its SHA-256; a mismatch is an error and nothing is served.
- ``vamos llm prepare [--rehash]``: only the join and the check; prints the file's path.

Any client reaches the server at ``http://127.0.0.1:PORT/v1`` with model ``local``; the
``local`` stack, ``--caller local`` and ``--model local`` find it there (or at
``VAMOS_LOCAL_LLM_URL``) and start one themselves when none answers.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from vamos_env.cli.args import CommandLineParser, fail, integer, loopback_host, port


def register(subparsers: Any) -> None:
    """Add ``llm serve`` and ``llm prepare`` to ``vamos``'s subparsers."""
    llm = subparsers.add_parser("llm", help="the local model server (OpenAI-compatible, loopback)")
    sub = llm.add_subparsers(dest="llm_command", required=True)
    serve = sub.add_parser("serve", help="serve a GGUF on 127.0.0.1 until Ctrl-C")
    serve.add_argument("--model", help="a GGUF file (default: the shipped Qwen2.5-Coder-1.5B)")
    serve.add_argument("--host", type=loopback_host, default="127.0.0.1")
    serve.add_argument("--port", type=port, default=None, help="port (default 8765)")
    serve.add_argument("--threads", type=integer(1, 1024), help="CPU threads (default: all)")
    serve.add_argument(
        "--context", type=integer(512, 1_048_576), default=16384, help="tokens per slot (16384)"
    )
    serve.add_argument(
        "--slots", type=integer(1, 64), default=2, help="requests served at once (default 2)"
    )
    serve.add_argument(
        "--chat-template", help="a Jinja chat template file (default: the model's, corrected)"
    )
    serve.add_argument("--verbose", action="store_true", help="llama.cpp's log on stderr")
    serve.set_defaults(func=_serve)
    prepare = sub.add_parser("prepare", help="join and check the shipped model; print its path")
    prepare.add_argument("--rehash", action="store_true", help="hash a cached file again")
    prepare.set_defaults(func=_prepare)


def _serve(args: argparse.Namespace) -> int:
    from vamos_env.llm.server import DEFAULT_PORT, LocalServer, LocalServerError, ServerSettings
    from vamos_env.llm.weights import ModelFileError

    model = Path(args.model) if args.model else None
    if model is not None and not model.is_file():
        return fail("vamos llm serve", f"--model: expected a GGUF file, got {args.model!r}")
    template = None
    if args.chat_template:
        try:
            template = Path(args.chat_template).read_text()
        except OSError as exc:
            return fail("vamos llm serve", f"--chat-template: cannot read it: {exc}")
    options: dict[str, Any] = {
        "model": model,
        "host": args.host,
        "port": args.port if args.port is not None else DEFAULT_PORT,
        "context": args.context,
        "slots": args.slots,
        "chat_template": template,
        "verbose": args.verbose,
    }
    if args.threads:
        options["threads"] = args.threads
    settings = ServerSettings(**options)
    try:
        server = LocalServer.start(settings)
    except (ModelFileError, LocalServerError) as exc:
        return fail("vamos llm serve", exc)
    print(
        f"serving {server.model_path} as model 'local' at {server.base_url} "
        f"(loaded in {server.load_s:.1f} s; {settings.slots} slot(s) of {settings.context} "
        f"tokens, {settings.threads} thread(s); chat template: {server.template_note}). "
        "Ctrl-C stops it.",
        flush=True,
    )
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # llama.cpp installs its own handlers on load; ours replace them so both stop it.
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    server.stop()
    print("stopped", flush=True)
    return 0


def _prepare(args: argparse.Namespace) -> int:
    from vamos_env.llm.weights import DEFAULT_MODEL, SHIPPED, ModelFileError, materialise

    model = SHIPPED[DEFAULT_MODEL]
    try:
        path = materialise(model, rehash=args.rehash)
    except (ModelFileError, OSError) as exc:
        return fail("vamos llm prepare", exc)
    print(f"{path} ({model.title}, {model.size:,} bytes, SHA-256 {model.sha256})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = CommandLineParser(prog="vamos")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
