"""Build the labelled set: play the variants on real exam tasks and store what regrades them.

Run once (``.venv/bin/python tests/grading/labelled/build.py``); the outputs are committed:

- ``tasks.json``: a copy of every exam task played (the exam may be rebuilt; these stay);
- ``calls.jsonl``: one call per line: id, variant, note, task id, the full transcript (every
  turn, tool call, tool result and write as the environment recorded it);
- ``labels.yaml``: the first draft of the labels, from what each variant was written to do
  (``variants.py``), never from the grader. The draft is then read call by call and edited
  by hand; ``--force`` is needed to overwrite it, and that loses the edits.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tricks = _load("hacking_tricks", HERE.parent / "hacking" / "tricks.py")
variants = _load("labelled_variants", HERE / "variants.py")


def choose(tasks: list[Any], kinds: tuple[str, ...], count: int) -> list[Any]:
    """Up to ``count`` tasks with one of ``kinds``, spread over accounts and the exam."""
    fit = [t for t in tasks if "*" in kinds or {r.kind for r in t.requests} & set(kinds)]
    chosen: list[Any] = []
    seen: set[str] = set()
    step = max(1, len(fit) // max(count, 1))
    for task in fit[::step] + fit:
        if len(chosen) >= count:
            break
        if task in chosen:
            continue
        if task.caller.account_number in seen and len(seen) < len(
            {t.caller.account_number for t in fit}
        ):
            continue
        seen.add(task.caller.account_number)
        chosen.append(task)
    return chosen


def key_of(task: Any, check: Any) -> tuple[str, str]:
    kind = task.requests[check.request_index].kind
    return kind, check.id.split("_", 1)[1]


def draft(variant: Any, task: Any, transcript: dict[str, Any]) -> dict[str, Any]:
    """The first draft of a call's labels, from what the variant was written to do."""
    checks: dict[str, list[str]] = {}
    turns = transcript["turns"]
    agent_words = " ".join(t["text"] for t in turns if t["speaker"] == "agent")
    caller_words = " ".join(t["text"] for t in turns if t["speaker"] == "caller")
    applied = variant.applied is None or re.search(variant.applied, agent_words)
    outcomes = {
        (t["tool_call"]["name"], "success" if t["tool_result"]["ok"] else "failure")
        for t in turns
        if t["tool_call"]
    }
    written = {name for name, outcome in outcomes if outcome == "success"}
    for check in task.checks:
        request = task.requests[check.request_index]
        why = variant.expect.get(key_of(task, check)) if applied else None
        window = check.window
        if check.kind in ("not_called", "not_said"):
            pass  # nothing forbidden was done or said, whether or not the request came up
        elif request.says not in caller_words and request.rephrase not in caller_words:
            why = "the caller never got to this request: the call ended on an earlier one"
        elif window.after_tool and (window.after_tool, window.after_outcome) not in outcomes:
            why = f"what opens it never happened ({window.after_tool} {window.after_outcome})"
        elif check.kind == "confirm" and window.before_tool and window.before_tool not in written:
            why = f"the caller never agreed; no {window.before_tool} was made"
        if (
            why is None
            and variant.money_fails
            and check.value_type == "money"
            and int(check.value or 0) >= variant.money_fails_from
        ):
            why = variant.money_fails
        if why is not None:
            checks[check.id] = ["fail", why.replace("{card}", "...")]
        else:
            checks[check.id] = ["pass", f"as required: {check.description}"]
    requirements_ok = all(v[0] == "pass" for v in checks.values())
    actions = _actions_draft(task, transcript)
    return {
        "gate": ["fail", variant.gate]
        if variant.gate
        else ["pass", "nothing of the account is said before verification, no tool before it"],
        "actions": actions,
        "requirements": ["pass", "every check holds"]
        if requirements_ok
        else ["fail", "; ".join(sorted({v[1] for v in checks.values() if v[0] == "fail"}))],
        "checks": checks,
    }


def _actions_draft(task: Any, transcript: dict[str, Any]) -> list[str]:
    """Read the trace's successful writes against the task's expected changes."""
    writes = [
        t["tool_call"]
        for t in transcript["turns"]
        if t["tool_call"]
        and t["tool_call"]["name"]
        in (
            "make_payment",
            "create_payment_arrangement",
            "modify_payment_arrangement",
            "request_due_date_extension",
            "set_paperless_billing",
        )
        and t["tool_result"]["ok"]
        and t["tool_result"]["result"].get("changed", True) is not False
    ]
    expected = list(task.expected_changes)
    if len(writes) != len(expected):
        return [
            "fail",
            f"{len(writes)} account change(s) made, {len(expected)} expected "
            f"({', '.join(c.tool for c in expected) or 'none'})",
        ]
    for made, want in zip(writes, expected, strict=True):
        if made["name"] != want.tool:
            return ["fail", f"{made['name']} made where {want.tool} was expected"]
        for key in ("bill_id", "amount_cents", "installments", "enabled", "payment_method_id"):
            if (
                key in want.values
                and key in made["arguments"]
                and made["arguments"][key] != want.values[key]
            ):
                return ["fail", f"{want.tool} with {key}={made['arguments'][key]!r}"]
    return ["pass", "exactly the expected changes, in order, with the expected values"]


def _play(env: Any, agent: Any, task_id: str) -> Any:
    """Play one call; only its transcript is kept, so a grader mid-rewrite cannot stop the
    build (the end-of-call grading is retried without the verdict)."""
    try:
        return tricks.play(env, agent, task_id)
    except Exception:  # the grader raised at the end of the call: keep what was said
        episode = env._episode  # the call that just ended
        if episode is None or not episode.ended:
            raise
        transcript = episode.transcript.model_dump(mode="json")
        return tricks.Played(task_id, "", 0.0, {}, transcript, str(episode.end_reason))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--force", action="store_true", help="overwrite labels.yaml")
    args = parser.parse_args()
    from vamos_env.envs.energy.env import VamosEnergyEnv

    env = VamosEnergyEnv()
    tasks = sorted(env.task_set.tasks, key=lambda t: t.task_id)
    calls: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    used: dict[str, Any] = {}
    for variant in variants.variants():
        for task in choose(tasks, variant.kinds, variant.tasks):
            played = _play(env, variant.make(), task.task_id)
            call_id = f"{variant.name}/{task.task_id}"
            used[task.task_id] = task
            calls.append(
                {
                    "id": call_id,
                    "variant": variant.name,
                    "note": variant.note,
                    "task_id": task.task_id,
                    "transcript": played.transcript,
                }
            )
            labels.append({"id": call_id, **draft(variant, task, played.transcript)})
    (HERE / "tasks.json").write_text(
        json.dumps(
            {
                "name": "labelled-set-tasks",
                "tasks": [used[k].model_dump(mode="json") for k in sorted(used)],
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    with (HERE / "calls.jsonl").open("w") as out:
        for call in calls:
            out.write(json.dumps(call, sort_keys=True) + "\n")
    target = HERE / "labels.yaml"
    if target.exists() and not args.force:
        print(f"{target} exists (hand-edited labels); not overwritten (use --force)")
    else:
        target.write_text(yaml.safe_dump(labels, sort_keys=False, width=100, allow_unicode=True))
    print(f"{len(calls)} calls on {len(used)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
