"""Property-based fuzzing of ``step()``: whatever an agent sends, nothing escapes, and every
call that ends can be stored and reported.

The actions mix the accepted shapes with hostile ones: lone surrogates and other odd code
points in speech, names and argument keys; tool arguments nested hundreds of levels deep
(as objects, and as JSON text); numbers of thousands of digits; OpenAI messages whose text
parts are null or not text; non-JSON values; mappings whose methods raise; bytes that are
not UTF-8. Each example is one call played through the runner's ``Rollout`` (so a raise
out of ``step()`` would show as a lost session), and every record goes through the store
and the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vamos_env.envs.energy.tools import tool_schemas
from vamos_env.report import write_report
from vamos_env.runner.plan import plan_calls, select_tasks
from vamos_env.runner.rollout import Rollout, RolloutSettings, storable_line
from vamos_env.runner.store import ResultStore, read_store

TOOLS = [t["function"]["name"] for t in tool_schemas()]
SURROGATES = st.sampled_from(["\ud83d", "\ude00", "\udfff", "\ud800"])
ANY_TEXT = st.one_of(
    st.text(alphabet=st.characters(exclude_categories=()), max_size=40),
    # A model splitting an emoji: words with a lone surrogate among them.
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=15), SURROGATES, st.text(max_size=15)),
)


class Hostile(dict):  # type: ignore[type-arg]
    """A mapping whose reads raise."""

    def get(self, *args: Any) -> Any:
        raise RuntimeError("no reading me")

    def items(self) -> Any:
        raise RuntimeError("no iterating me")


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no printing me")


def nested(depth: int, leaf: Any, as_list: bool) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if as_list else {"a\ud83d": value}
    return value


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), ANY_TEXT)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)
deep = st.builds(nested, st.integers(0, 400), json_leaf, st.booleans())
arguments = st.one_of(
    st.dictionaries(st.sampled_from(["account_number", "bill_id", "x\udc00"]), json_value),
    deep,
    deep.map(lambda v: json.dumps(v)),  # deep JSON text, surrogates escaped
    st.integers(0, 6000).map(lambda n: '{"amount_cents": ' + "9" * n + "}"),
    json_value,
    st.sampled_from([None, "", "{", b"\xff\xfe", {1: 2}, {"k": {1, 2}}, Hostile()]),
    st.just(Unprintable()),
)
tool_name = st.one_of(st.sampled_from(TOOLS), ANY_TEXT, st.just("x" * 500))
say = st.builds(lambda t: {"type": "say", "text": t}, ANY_TEXT)
tool_call = st.builds(
    lambda n, a, i: {"type": "tool_call", "name": n, "arguments": a, "call_id": i},
    tool_name,
    arguments,
    st.one_of(st.none(), ANY_TEXT, st.integers()),
)
content = st.one_of(
    st.none(),
    ANY_TEXT,
    st.lists(
        st.one_of(
            st.fixed_dictionaries(
                {"type": st.just("text"), "text": st.one_of(st.none(), ANY_TEXT)}
            ),
            st.fixed_dictionaries({"type": ANY_TEXT, "text": json_value}),
            json_value,
        ),
        max_size=3,
    ),
    json_value,
)
openai_call = st.one_of(
    st.builds(
        lambda n, a, i: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
        tool_name,
        arguments,
        st.one_of(st.none(), ANY_TEXT),
    ),
    json_value,
)
assistant = st.builds(
    lambda c, calls: {"role": "assistant", "content": c, "tool_calls": calls},
    content,
    st.one_of(st.none(), st.lists(openai_call, max_size=3), json_value),
)
hostile = st.one_of(
    json_value,
    ANY_TEXT,
    st.binary(max_size=20),
    deep,
    st.sampled_from([Hostile(), Unprintable(), {"type": "say"}, {"type": None}, float("nan")]),
    st.builds(lambda a: json.dumps(a, default=lambda _: None), st.one_of(say, tool_call)),
)
action = st.one_of(say, say, tool_call, tool_call, assistant, hostile)
call_actions = st.lists(action, min_size=20, max_size=50)


class Scripted:
    """Plays actions from a shared list (what one call leaves, the next plays), then ends."""

    def __init__(self, actions: list[Any]) -> None:
        self.actions = actions

    def reset(self, info: Mapping[str, Any]) -> None:
        pass

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> Any:
        assert isinstance(observation, str)
        return self.actions.pop(0) if self.actions else {"type": "end_call"}


def specs() -> Iterator[Any]:
    selection = select_tasks("exam")
    table = plan_calls(["fuzz"], selection, repeats=3, trial_id="default")
    while True:
        yield from table


def test_no_action_escapes_step_and_every_call_is_stored_and_reported(tmp_path: Path) -> None:
    rollout = Rollout(select_tasks("exam").task_set, RolloutSettings(timeout_s=60))
    plan = specs()
    seen: dict[str, int] = {"actions": 0, "calls": 0, "replaced": 0, "refused": 0}
    lines: list[tuple[str, str, str]] = []

    @settings(
        max_examples=110,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(call_actions)
    def calls(actions: list[Any]) -> None:
        remaining = list(actions)
        while remaining:  # a call the caller ends early leaves the rest to the next call
            spec = next(plan)
            before = len(remaining)
            record = rollout.run(spec, lambda: Scripted(remaining))
            # Nothing escaped step(): a raise there would be a lost session.
            assert all(e.kind == "caller_deviation" for e in record.exclusions), record.exclusions
            assert record.agent_fault is None and record.verdict is not None
            status, line = storable_line(record)
            assert status == record.status  # stored whole, not as a store fault
            line.encode("utf-8")
            seen["actions"] += before - len(remaining)
            seen["calls"] += 1
            seen["replaced"] += record.replaced_code_points
            seen["refused"] += sum("Arguments refused" in (t.error or "") for t in record.trace)
            lines.append((f"{spec.stack}/{spec.task_id}/{seen['calls']}", status, line))

    calls()
    print(f"\nfuzzed step(): {seen}")
    assert seen["actions"] >= 3000, seen
    assert seen["replaced"] > 0 and seen["refused"] > 0, seen  # the hostile cases did happen

    # Every finished call goes to the store and comes back, and the report renders them all.
    run = tmp_path / "fuzz"
    with ResultStore(run / "results.jsonl") as store:
        for key, status, line in lines:
            record = json.loads(line)
            record["key"] = key  # one key per example (specs repeat across examples)
            store.append([(key, status, json.dumps(record))])
    records = read_store(run)
    assert len(records) == seen["calls"]
    files = write_report(run)
    assert files.html.exists() and len(list(files.calls.iterdir())) == seen["calls"]


def test_arguments_whose_reading_raises_are_refused_with_a_reason() -> None:
    from vamos_env.storable import LimitExceeded, storable_json

    refused = storable_json({"outer": Hostile(a=1)})
    assert isinstance(refused, LimitExceeded) and "RuntimeError" in refused.message


def test_a_tool_call_with_hostile_arguments_is_an_error_observation() -> None:
    from vamos_env.envs.energy.env import VamosEnergyEnv

    env = VamosEnergyEnv(recogniser="ideal")
    env.reset(seed=0)
    action = {"type": "tool_call", "name": "verify_caller", "arguments": Hostile(a=1)}
    observation, reward, terminated, truncated, _ = env.step(action)
    assert not terminated and not truncated and reward == 0
    assert "RuntimeError" in str(observation)
