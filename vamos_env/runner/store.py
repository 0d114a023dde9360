"""The results store: an append-only JSON Lines file, one call per line, keyed by call.

Only the driver writes, so there is one writer. Each record is one ``write`` of one whole
line on a file opened for appending, followed by ``fsync``: after a crash the file holds
whole lines and at most one torn last line (a line without its newline). Opening the
store cuts such a tail off before anything is appended, so a torn line never glues itself
to the next record; its call simply runs again. A key already in the store is never run
or written again, so rerunning a command resumes it without duplicates.

A damaged line in the middle (a disk fault, a hand edit) is an error naming the line and
the repair command, ``vamos repair runs/NAME``: ``repair_store`` moves every unreadable
line to ``results.rejected.jsonl`` and rewrites the store atomically (a temporary file,
fsync, rename), so their calls run again. ``ResultStore.drop`` does the same for the
records of chosen keys (``vamos eval --retry-faults``: benchmark faults rerun in place),
archiving them in ``results.retried.jsonl``; the store stays exactly-once throughout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from vamos_env.runner.records import CallRecord

REJECTED_FILE = "results.rejected.jsonl"
RETRIED_FILE = "results.retried.jsonl"


class StoreError(ValueError):
    """A results file that cannot be trusted: names the line and what was wrong."""


def _repair_hint(path: Path) -> str:
    return (
        f"repair with: vamos repair {path.parent} (moves unreadable lines to "
        f"{REJECTED_FILE}; their calls run again)"
    )


def _write_atomically(path: Path, lines: Iterable[bytes]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        for line in lines:
            handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _append_lines(path: Path, lines: Iterable[bytes]) -> None:
    with path.open("ab") as handle:
        for line in lines:
            handle.write(line if line.endswith(b"\n") else line + b"\n")
        handle.flush()
        os.fsync(handle.fileno())


class ResultStore:
    """``runs/NAME/results.jsonl``: read what is done, append what finishes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.torn_bytes = 0  # size of the torn tail cut off when the store was opened
        self._keys: dict[str, str] = {}  # key -> status
        self._fd: int | None = None

    # -- reading ---------------------------------------------------------------------------
    def open(self) -> ResultStore:
        """Repair a torn tail, index the keys present, and get ready to append."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            self._cut_torn_tail()
            for number, row in self._rows():
                key, status = row.get("key"), row.get("status")
                if not isinstance(key, str) or not isinstance(status, str):
                    raise StoreError(
                        f"{self.path}:{number}: expected a call record with a key and a "
                        f"status; {_repair_hint(self.path)}"
                    )
                self._keys.setdefault(key, status)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self

    def _cut_torn_tail(self) -> None:
        size = self.path.stat().st_size
        if size == 0:
            return
        with self.path.open("rb+") as handle:
            # Find the last newline, reading backwards in blocks (records can be large).
            end = size
            block = 1 << 16
            keep = 0
            while end > 0:
                start = max(0, end - block)
                handle.seek(start)
                chunk = handle.read(end - start)
                at = chunk.rfind(b"\n")
                if at >= 0:
                    keep = start + at + 1
                    break
                end = start
            if keep < size:
                self.torn_bytes = size - keep
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())

    def _rows(self) -> Iterator[tuple[int, dict[str, object]]]:
        with self.path.open("rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    if not line.endswith(b"\n"):
                        return  # a torn last line (a run killed mid-write): not a record
                    raise StoreError(
                        f"{self.path}:{number}: expected a JSON line, got a torn or corrupted "
                        f"one ({exc.msg}); {_repair_hint(self.path)}"
                    ) from None
                if not isinstance(row, dict):
                    raise StoreError(
                        f"{self.path}:{number}: expected a JSON object; {_repair_hint(self.path)}"
                    )
                yield number, row

    @property
    def keys(self) -> dict[str, str]:
        """Every stored key with its status."""
        return dict(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def records(self) -> Iterator[CallRecord]:
        """Every stored record, validated; a second line with a stored key is skipped."""
        seen: set[str] = set()
        for number, row in self._rows():
            try:
                record = CallRecord.model_validate(row)
            except ValidationError as exc:
                first = " ".join(str(exc).splitlines()[:3])
                raise StoreError(
                    f"{self.path}:{number}: expected a call record: {first}; "
                    f"{_repair_hint(self.path)}"
                ) from None
            if record.key in seen:
                continue
            seen.add(record.key)
            yield record

    # -- writing ---------------------------------------------------------------------------
    def append(self, lines: Iterable[tuple[str, str, str]]) -> int:
        """Append ``(key, status, json_line)`` records not yet stored; fsync; return how many.

        Each line is written whole in one system call; a key already present is dropped
        (a call that ran twice, e.g. after a worker was retried, is stored once).
        """
        if self._fd is None:
            raise RuntimeError("open() the store before appending")
        written = 0
        for key, status, line in lines:
            if key in self._keys:
                continue
            # A record is serialised from storable text, so "replace" never fires; it is the
            # last guard that one odd line cannot stop the run.
            data = (line.rstrip("\n") + "\n").encode("utf-8", "replace")
            view = memoryview(data)
            while view:
                # A short write is rare on a local file but allowed; finish the line.
                view = view[os.write(self._fd, view) :]
            self._keys[key] = status
            written += 1
        if written:
            os.fsync(self._fd)
        return written

    def drop(self, keys: Collection[str]) -> int:
        """Remove the records of ``keys`` (archived in ``results.retried.jsonl``) so that
        their calls run again; the store is rewritten atomically. Returns how many."""
        wanted = set(keys) & set(self._keys)
        if not wanted:
            return 0
        was_open = self._fd is not None
        self.close()
        kept: list[bytes] = []
        dropped: list[bytes] = []
        with self.path.open("rb") as handle:
            for line in handle:
                try:
                    key = json.loads(line).get("key") if line.strip() else None
                except (ValueError, AttributeError):
                    key = None
                (dropped if key in wanted else kept).append(line)
        _append_lines(self.path.with_name(RETRIED_FILE), dropped)
        _write_atomically(self.path, kept)
        for key in wanted:
            del self._keys[key]
        if was_open:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return len(wanted)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ResultStore:
        return self.open() if self._fd is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Repaired:
    """What ``repair_store`` did."""

    path: Path
    rejected: Path
    kept: int
    moved: int
    lines: tuple[int, ...]  # the line numbers moved


def repair_store(run: str | Path) -> Repaired:
    """Move every line that is not a readable call record to ``results.rejected.jsonl``
    (a later line of a key already stored is kept out too); rewrite the store atomically."""
    path = Path(run)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.exists():
        raise StoreError(f"{path}: no results file")
    kept: list[bytes] = []
    moved: list[bytes] = []
    numbers: list[int] = []
    seen: set[str] = set()
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = CallRecord.model_validate_json(line)
            except (ValidationError, ValueError):
                record = None
            if record is None or record.key in seen:
                moved.append(line)
                numbers.append(number)
                continue
            seen.add(record.key)
            kept.append(line if line.endswith(b"\n") else line + b"\n")
    rejected = path.with_name(REJECTED_FILE)
    if moved:
        _append_lines(rejected, moved)
        _write_atomically(path, kept)
    return Repaired(path, rejected, len(kept), len(moved), tuple(numbers))


def read_store(path: str | Path) -> list[CallRecord]:
    """Every record of a results file (a run folder or the file itself), without opening it
    for writing."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.exists():
        raise StoreError(f"{path}: no results file")
    return list(ResultStore(path).records())
