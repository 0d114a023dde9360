"""The progress line of a run: calls done, pass rate so far, throughput and ETA.

On a terminal the line is redrawn in place (at most five times a second); in a log (CI,
a pipe) a full line is printed every tenth of the run or every 15 seconds, whichever
comes first, so logs stay short.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import TextIO


def format_duration(seconds: float) -> str:
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class Progress:
    """Counts finished calls; ``statuses`` are the records' ``pass``/``fail``/``excluded``."""

    def __init__(
        self,
        total: int,
        *,
        already_done: int = 0,
        stream: TextIO | None = None,
        enabled: bool = True,
        label: str = "calls",
    ) -> None:
        self.total = total
        self.already_done = already_done
        self.done = 0
        self.passed = 0
        self.counted = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.label = label
        self.started = time.perf_counter()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self._last_step = -1

    @property
    def remaining(self) -> int:
        return self.total - self.already_done - self.done

    def update(self, statuses: Iterable[str]) -> None:
        for status in statuses:
            self.done += 1
            if status != "excluded":
                self.counted += 1
                self.passed += status == "pass"
        self._draw(final=False)

    def line(self) -> str:
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        finished = self.already_done + self.done
        width = len(str(self.total))
        share = finished / self.total if self.total else 1.0
        passing = f"{self.passed / self.counted:.1%}" if self.counted else "-"
        eta = format_duration(self.remaining / rate) if rate > 0 else "?"
        return (
            f"[{finished:>{width}}/{self.total}] {share:5.1%} {self.label} | pass {passing} "
            f"of {self.counted} counted | {rate:.1f} calls/s | ETA {eta}"
        )

    def _draw(self, *, final: bool) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._tty:
            if final or now - self._last_draw >= 0.2:
                self.stream.write("\r" + self.line() + ("\n" if final else ""))
                self.stream.flush()
                self._last_draw = now
            return
        step = int(10 * (self.already_done + self.done) / self.total) if self.total else 10
        if final or step > self._last_step or now - self._last_draw >= 15:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
            self._last_draw = now
            self._last_step = step

    def close(self) -> None:
        self._draw(final=True)
