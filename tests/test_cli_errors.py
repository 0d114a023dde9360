"""Every bad command line is one line on stderr naming the argument, what was expected and
what arrived, and a non-zero exit, before any call runs: the cases found by trying the
command line as a careless user and as an attacker would."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vamos_env.cli import main
from vamos_env.envs.energy.env import resolve_tasks
from vamos_env.twins.serve import TwinServer

STACKS = Path(__file__).parent / "runner" / "stacks.py"
EVAL = ["eval", "--tasks", "exam:1", "--repeats", "1", "--executor", "local", "--quiet"]


def _syntax_error(tmp: Path) -> list[str]:
    bad = tmp / "broken_stack.py"
    bad.write_text("def make(:\n    pass\n")
    return [*EVAL, "--stacks", f"b={bad}:make", "--out", str(tmp / "run")]


def _prices(tmp: Path) -> list[str]:
    prices = tmp / "prices.json"
    prices.write_text('{"models": {"gpt-4o": {"input_per_million": "cheap"}}')
    return [*EVAL, "--stacks", "reference", "--prices", str(prices), "--out", str(tmp / "r")]


def _unknown_account(tmp: Path) -> list[str]:
    data = resolve_tasks("exam").model_dump(mode="json", exclude_none=True)
    data["tasks"] = data["tasks"][:2]
    data["tasks"][1]["caller"]["account_number"] = "9999-99999"
    path = tmp / "tasks.json"
    path.write_text(json.dumps(data))
    return [*EVAL[:1], "--tasks", str(path), *EVAL[3:], "--stacks", "reference", "--out", str(tmp)]


def _not_an_agent(tmp: Path) -> list[str]:
    module = tmp / "odd_stack.py"
    module.write_text("def make():\n    return 42\n")
    return [*EVAL, "--stacks", f"odd={module}:make", "--out", str(tmp / "run")]


def _corrupt_manifest(tmp: Path) -> list[str]:
    (tmp / "run").mkdir()
    (tmp / "run" / "run.json").write_text('{"trial_id": "default", ')
    return [*EVAL, "--stacks", "reference", "--out", str(tmp / "run")]


def _torn_middle(tmp: Path) -> list[str]:
    run = tmp / "run"
    run.mkdir()
    (run / "results.jsonl").write_text('{"key": "a/b/0", "status": "pass"}\n{"key": "a/b\n{}\n')
    return [*EVAL, "--stacks", "reference", "--out", str(run)]


def _torn_first_report(tmp: Path) -> list[str]:
    run = tmp / "run"
    run.mkdir()
    (run / "results.jsonl").write_text('{"key": "a/b\n{}\n')
    return ["report", str(run)]


def _report_of_a_file(tmp: Path) -> list[str]:
    (tmp / "notes.txt").write_text("hello")
    return ["report", str(tmp / "notes.txt")]


def _port_in_use(tmp: Path) -> list[str]:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    _HELD.append(holder)
    return ["twins", "serve", "--port", str(holder.getsockname()[1])]


_HELD: list[socket.socket] = []
NO_CLUSTER = [*EVAL[:3], "--stacks", "reference", "--address", "127.0.0.1:1", "--out", "o"]
NO_CALLER_KEY = [*EVAL, "--stacks", "reference", "--caller", "gemini", "--out", "o"]
Case = tuple[str, list[str] | Callable[[Path], list[str]], str]
CASES: list[Case] = [
    ("unimportable module", [*EVAL, "--stacks", "x=no_such_module:f", "--out", "o"], "--stacks"),
    ("stack file syntax error", _syntax_error, "--stacks"),
    ("malformed price table", _prices, "--prices"),
    ("zero CPUs", [*EVAL, "--stacks", "reference", "--num-cpus", "0", "--out", "o"], "--num-cpus"),
    ("serve on all interfaces", ["twins", "serve", "--host", "0.0.0.0"], "--host"),
    ("a port in use", _port_in_use, "--port"),
    ("a negative port", ["twins", "serve", "--port", "-1"], "--port"),
    (
        "huge repeats",
        [*EVAL, "--stacks", "reference", "--repeats", "100000000", "--out", "o"],
        "--repeats",
    ),
    (
        "zero turns",
        [*EVAL, "--stacks", "reference", "--max-turns", "0", "--out", "o"],
        "--max-turns",
    ),
    (
        "unknown level",
        [*EVAL, "--stacks", "reference", "--level-db", "7", "--out", "o"],
        "--level-db",
    ),
    (
        "nan timeout",
        [*EVAL, "--stacks", "reference", "--timeout", "nan", "--out", "o"],
        "--timeout",
    ),
    ("account not in the world", _unknown_account, "tasks"),
    ("factory returns a non-agent", _not_an_agent, "--stacks"),
    ("nothing at the address", NO_CLUSTER, "--address"),
    ("corrupt run.json", _corrupt_manifest, "run.json"),
    ("torn line mid-file (eval)", _torn_middle, "results.jsonl:2"),
    ("torn line mid-file (report)", _torn_first_report, "results.jsonl:1"),
    ("report of a file", _report_of_a_file, "notes.txt"),
    ("openai without a key", [*EVAL, "--stacks", "reference,openai", "--out", "o"], "--stacks"),
    ("unknown caller", [*EVAL, "--stacks", "reference", "--caller", "x", "--out", "o"], "--caller"),
    ("caller without a key", NO_CALLER_KEY, "--caller"),
    ("a share above one", ["judge", "gate", "x.jsonl", "--min-pass-rate", "2"], "--min-pass-rate"),
    ("a seed that is not a number", ["tasks", "build", "--seed", "soon"], "--seed"),
    ("a missing --out", [*EVAL, "--stacks", "reference"], "--out"),
    ("an unknown option", [*EVAL, "--stacks", "reference", "--out", "o", "--fast"], "--fast"),
]


@pytest.mark.parametrize(
    ("argv", "names"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_bad_argument_is_one_line_naming_it_with_expected_and_actual(
    argv: Any,
    names: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for variable in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(tmp_path)
    args = argv(tmp_path) if callable(argv) else argv
    try:
        try:
            code = main(args)
        except SystemExit as exit_:  # argparse's own errors exit
            code = exit_.code
    finally:
        while _HELD:
            _HELD.pop().close()
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code not in (0, None), err
    assert len(lines) == 1, err
    assert lines[0].startswith("vamos"), lines[0]
    assert names in lines[0] and "expected" in lines[0], lines[0]
    assert "got" in lines[0] or "repair" in lines[0], lines[0]
    assert not (tmp_path / "o" / "results.jsonl").exists()  # failed before any call


def test_what_to_set_is_named_for_a_stack_without_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main([*EVAL, "--stacks", "reference,openai", "--out", str(tmp_path)]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    assert main([*EVAL, "--stacks", "openai", "--out", str(tmp_path)]) == 2
    assert "expected a model server at OPENAI_BASE_URL" in capsys.readouterr().err


def test_serve_accepts_ipv6_loopback() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = TwinServer(*_empty_twins(), host="::1")
    except OSError:
        pytest.skip("::1 cannot be bound here")
    with server:
        assert server.base_url.startswith("http://[::1]:")
        import httpx

        answer = httpx.get(
            f"{server.base_url}/__vamos/health",
            headers={"authorization": f"Bearer {server.admin_token}"},
        )
        assert answer.json()["status"] == "ok"


def _empty_twins() -> tuple[Any, Any]:
    from vamos_env.twins.fineract import LoanTwin
    from vamos_env.twins.stripe import BillingTwin

    return BillingTwin(), LoanTwin()
