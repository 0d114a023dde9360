"""``vamos play``: a person in the agent's seat, driven here through injected streams."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from vamos_env.cli.play import play

TASK = "s-enable_paperless-a06"
OPTIONS = ["--task", TASK, "--persona", "calm", "--background", "clean", "--seed", "2"]
VERIFY = {
    "account_number": "8550-48787",
    "name_on_account": "Yolanda Brubaker",
    "second_factor": "15701",
}


def session(lines: list[str], argv: list[str] = OPTIONS) -> tuple[int, str]:
    out = io.StringIO()
    code = play(argv, stdin=io.StringIO("".join(f"{line}\n" for line in lines)), stdout=out)
    return code, out.getvalue()


def test_a_person_passes_the_task() -> None:
    code, shown = session(
        [
            "Hello, may I have your account number, full name and your postal code?",
            f"/tool verify_caller {json.dumps(VERIFY)}",
            "",  # a blank line is not a turn
            "/tool get_account",
            "I can email your bills to yolanda.brubaker@example.com. Is that right?",
            '/tool set_paperless_billing {"enabled": true}',
            "Paperless billing is on now.",
            "/end",
        ]
    )
    assert code == 0
    assert f"Task {TASK} (1 request(s)); persona calm, background clean, seed 2." in shown
    assert "caller> Hi. I'd like to switch to paperless billing, please." in shown
    assert "caller> " in shown.split("postal code")[-1]  # the caller answered
    assert 'tool> verify_caller: {"status": "verified"}' in shown
    assert "Call ended (" in shown and "Reward 1." in shown
    assert "    [x] r0_email" in shown and "  requirements: pass" in shown


def test_commands_that_do_not_use_a_turn() -> None:
    code, shown = session(["/tools", "/tools make_payment", "/prompt", "/tool", "/quit"])
    assert code == 0
    assert "  verify_caller(account_number, name_on_account, second_factor)" in shown
    assert '"amount_cents"' in shown  # the full schema of one tool
    assert "Rory" in shown  # the system prompt
    assert "! expected '/tool NAME {json}'" in shown
    assert "Left the call; it was not graded." in shown
    assert "Reward" not in shown


def test_a_failed_check_is_shown_with_its_reason() -> None:
    _, shown = session(["/tool get_account", "/end"])
    assert "  gate: pass" in shown  # refused before verification: no breach
    assert "  actions: FAIL" in shown
    assert "    [ ] change_1_set_paperless_billing: " in shown


def test_end_of_input_leaves_and_an_unknown_task_is_an_error() -> None:
    assert session([])[1].endswith("Left the call; it was not graded.\n")
    code, shown = session([], ["--task", "no-such-task"])
    assert code == 2 and "no task 'no-such-task'" in shown


def test_it_runs_as_a_program_on_real_stdin() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "vamos_env.cli.play", *OPTIONS],
        input="Hello, how can I help?\n/quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("caller> ") >= 2
