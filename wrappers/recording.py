"""``RecordEpisode``: one JSON line per finished call, appended crash-safely to a file.

Each record holds what is needed to study or replay the call: the task id, the reset
seed and options, the casting (persona, background, level, repeat, caller), the
transcript, the tool trace, the verdict and the reward, how the call ended, the
caller's own report, and whatever wrappers inside this one added to the final
``info`` (``faults_injected``, ``divergence``, ``partial_credit``, ...). The trace is
the transcript's tool turns in the session trace's shape (``call_id``, ``tool``,
``arguments``, ``result``, ``ok``, ``verified``, ``writes``).

Crash safety: a record is written only when its call ends, as one complete line in a
single unbuffered append (``O_APPEND``; nothing waits in a Python buffer, so each
record reaches the operating system at once; ``durable=True`` adds an ``fsync``). A
process that dies mid-call leaves no trace of that call; one that dies mid-write can
at worst leave a partial last line, which the next ``RecordEpisode`` on the file cuts
off before appending (it could never be parsed). ``read_records`` reads a file back.
A call abandoned by a new ``reset`` before it ended has no verdict and is not recorded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym

RECORD_VERSION = 1

# Reset info worth keeping (the system prompt and tool schemas are the same for every call).
_CASTING = ("task_id", "persona", "background", "level_db", "repeat", "caller", "request_count")
# Final info not worth keeping: per-step noise, or already in the record under another name.
_SKIP = {"system_prompt", "tools", "tool_results", "action_error", "turn"}


def trace_of(transcript: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool trace of a dumped transcript, one entry per tool call."""
    trace = []
    for turn in transcript.get("turns", []):
        call, result = turn.get("tool_call"), turn.get("tool_result")
        if call is None or result is None:
            continue
        trace.append(
            {
                "call_id": call["call_id"],
                "tool": call["name"],
                "arguments": call.get("arguments", {}),
                "result": result["result"],
                "ok": result["ok"],
                "verified": result.get("verified", False),
                "writes": result.get("writes", []),
            }
        )
    return trace


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Every complete record of a file (a partial last line, from a crash, is skipped)."""
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        lines.pop()  # no newline after it: a write cut short
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{path}:{number}: expected one JSON record per line ({exc})"
            ) from None
    return records


def _cut_partial_tail(path: Path) -> None:
    """Drop bytes after the last newline: the unparseable remains of a write cut short."""
    if not path.exists():
        return
    with path.open("rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # Walk back in blocks to the last newline (records can be large).
        position = size
        keep = 0
        while position > 0:
            start = max(0, position - 65536)
            handle.seek(start)
            block = handle.read(position - start)
            at = block.rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                break
            position = start
        handle.truncate(keep)


class RecordEpisode(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Append one JSON line per finished call to ``path``."""

    def __init__(self, env: gym.Env[Any, Any], path: str | Path, *, durable: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, path=path, durable=durable)
        gym.Wrapper.__init__(self, env)
        self.path = Path(path)
        self.durable = durable
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _cut_partial_tail(self.path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._call: dict[str, Any] | None = None
        self.recorded = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        self._call = {
            "record_version": RECORD_VERSION,
            "seed": seed,
            "options": dict(options or {}),
            **{key: info[key] for key in _CASTING if key in info},
        }
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if (terminated or truncated) and self._call is not None:
            self._write(self._record(float(reward), terminated, truncated, info))
            self._call = None
        return observation, reward, terminated, truncated, info

    def _record(
        self, reward: float, terminated: bool, truncated: bool, info: Mapping[str, Any]
    ) -> dict[str, Any]:
        assert self._call is not None
        transcript = info.get("transcript") or {}
        record = {
            **self._call,
            "reward": reward,
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "agent_turns": info.get("turn"),
        }
        record.update({k: v for k, v in info.items() if k not in _SKIP and k not in record})
        record["trace"] = trace_of(transcript)
        return record

    def _write(self, record: Mapping[str, Any]) -> None:
        if self._fd is None:
            raise RuntimeError(f"the recording {self.path} is closed")
        data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        # One write call per record: with O_APPEND the line lands whole at the end.
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self.durable:
            os.fsync(self._fd)
        self.recorded += 1

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        super().close()
