"""``vamos play``: take the agent's seat on one call, in the terminal, to explore a task.

The caller (the scripted caller, seeded) speaks first. Each line you type is one turn:

- words: said to the caller (through the chosen background's channel);
- ``/tool NAME {json}``: call a tool (``{}`` may be left out); the result is printed;
- ``/end``: end the call (say your closing words on the line before);
- ``/tools`` lists the tools and their arguments, ``/tools NAME`` shows one in full;
- ``/prompt`` prints the agent's system prompt;
- ``/quit`` (or end of input) leaves without grading.

When the call ends the verdict is printed check by check. A line the session cannot
read is answered with a hint and does not use up a turn. ``play(argv, stdin=...,
stdout=...)`` takes its streams as arguments so tests (and notebooks) can drive it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from vamos_env.cli.args import CommandLineParser, integer, text

PROMPT = "you> "
HELP = (
    "Type words to speak, '/tool NAME {json}' to call a tool, '/tools' to list them, "
    "'/prompt' for the system prompt, '/end' to end the call, '/quit' to leave."
)


def _parser() -> argparse.ArgumentParser:
    from vamos_env.callers.persona import SHIPPED_PERSONAS
    from vamos_env.channel.parameters import BACKGROUNDS

    parser = CommandLineParser(
        prog="vamos play", description="Be the agent on one call to the billing line."
    )
    parser.add_argument(
        "--task", type=text("task id"), default=None, help="task id (default: drawn from the seed)"
    )
    parser.add_argument(
        "--seed", type=integer(0, 2**63 - 1), default=0, help="reset seed (default 0)"
    )
    parser.add_argument("--persona", choices=sorted(SHIPPED_PERSONAS), default=None)
    parser.add_argument("--background", choices=list(BACKGROUNDS), default=None)
    parser.add_argument(
        "--tasks",
        default=None,
        help="'exam' (default), 'singles', or a task file; a --task not in the exam is "
        "also looked up in the singles",
    )
    return parser


def play(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run one interactive call; 0 when it ends or is left, 2 on bad options."""
    args = _parser().parse_args(argv)
    source = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout

    def say(line: str = "") -> None:
        out.write(line + "\n")
        out.flush()

    try:
        env, observation, info = _start(args)
    except ValueError as exc:
        say(f"error: {exc}")
        return 2
    tools: list[dict[str, Any]] = info["tools"]
    say(
        f"Task {info['task_id']} ({info['request_count']} request(s)); persona {info['persona']}, "
        f"background {info['background']}, seed {args.seed}."
    )
    say(HELP)
    _show_caller(say, observation)
    return _loop(env, source, out, say, tools, str(info["system_prompt"]))


def _start(args: argparse.Namespace) -> tuple[Any, str, dict[str, Any]]:
    from vamos_env.envs.energy.env import VamosEnergyEnv

    options: dict[str, Any] = {}
    for key in ("task", "persona", "background"):
        value = getattr(args, key)
        if value is not None:
            options["task_id" if key == "task" else key] = value
    names = [args.tasks] if args.tasks is not None else ["exam", "singles"]
    for name in names:
        env = VamosEnergyEnv(tasks=name)
        if args.task is None or args.task in {t.task_id for t in env.task_set.tasks}:
            observation, info = env.reset(seed=args.seed, options=options)
            return env, observation, info
    raise ValueError(f"--task: no task {args.task!r} in {' or '.join(names)}")


def _loop(
    env: Any,
    source: TextIO,
    out: TextIO,
    say: Callable[..., None],
    tools: list[dict[str, Any]],
    system_prompt: str,
) -> int:
    from vamos_env.wrappers.outcome import split_step, step_with_end
    from vamos_env.wrappers.transcript_rig import TextActionError, parse_text_action

    while True:
        out.write(PROMPT)
        out.flush()
        raw = source.readline()
        if not raw:  # end of input
            say()
            say("Left the call; it was not graded.")
            return 0
        line = raw.strip()
        if not line:
            continue
        command, _, rest = line.partition(" ")
        if command == "/quit":
            say("Left the call; it was not graded.")
            return 0
        if command == "/tools":
            _show_tools(say, tools, rest.strip())
            continue
        if command == "/prompt":
            say(system_prompt)
            continue
        parsed = parse_text_action(line)
        if isinstance(parsed, TextActionError):
            say(f"! {parsed.message}")
            continue
        action = parsed.to_env_action()
        if parsed.end:
            observation, reward, terminated, truncated, info = step_with_end(env, action)
        else:
            observation, reward, terminated, truncated, info = env.step(action)
        parts = split_step(str(observation), info)
        if parts.error is not None:
            say(f"! {parts.error}")
        for result in parts.tool_results:
            say(f"tool> {result['name']}: {json.dumps(result['result'], ensure_ascii=False)}")
        if parts.caller:
            _show_caller(say, parts.caller)
        if terminated or truncated:
            _show_verdict(say, float(reward), info)
            return 0


def _show_caller(say: Callable[..., None], words: str) -> None:
    for line in words.split("\n"):
        say(f"caller> {line}")


def _show_tools(say: Callable[..., None], tools: list[dict[str, Any]], name: str) -> None:
    functions = [t["function"] for t in tools]
    if name:
        chosen = [f for f in functions if f["name"] == name]
        if not chosen:
            say(f"! no tool {name!r}; the tools are: {', '.join(f['name'] for f in functions)}")
            return
        say(chosen[0]["description"])
        say(json.dumps(chosen[0]["parameters"], indent=2))
        return
    for function in functions:
        properties = function.get("parameters", {}).get("properties", {})
        say(f"  {function['name']}({', '.join(properties)})")


def _show_verdict(say: Callable[..., None], reward: float, info: Mapping[str, Any]) -> None:
    verdict = info.get("verdict") or {}
    say()
    say(f"Call ended ({info.get('end_reason')}). Reward {reward:g}.")
    for name in ("gate", "actions", "requirements"):
        assertion = verdict.get(name) or {}
        mark = {True: "pass", False: "FAIL", None: "undecided"}[assertion.get("passed")]
        say(f"  {name}: {mark}")
        for check in assertion.get("checks", []):
            box = {True: "[x]", False: "[ ]", None: "[?]"}[check.get("passed")]
            reason = f": {check['reason']}" if check.get("reason") and not check["passed"] else ""
            say(f"    {box} {check['id']}{reason}")
    if verdict.get("grading_fault"):
        say(f"  grading fault: {verdict['grading_fault']}")
    goal = info.get("caller_goal_met")
    if goal is not None:
        say(f"  the caller thinks its goal was {'met' if goal else 'not met'}")


def main(argv: Sequence[str] | None = None) -> int:
    return play(argv)


if __name__ == "__main__":
    raise SystemExit(main())
