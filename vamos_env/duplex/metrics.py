"""Turn-taking and latency metrics of one duplex call: pure functions over timed speech.

Every function takes speech segments as ``(start_s, end_s)`` pairs on the call's
simulated clock (the engine's ground truth: when the caller's voice was playing, when
the agent's audio carried speech, when the background alone carried speech) and
returns plain numbers, so each metric can be checked on constructed streams.

Definitions:

- **response latency**: for each caller speech segment, the time from its end to the
  start of the agent's first speech after it, when the agent starts before the
  caller's next segment (an agent that starts before the caller has finished is
  overlap, not latency; no reply before the caller speaks again is a missed reply);
- **overlap**: agent speech while the caller speaks, in seconds and in distinct
  intervals;
- **replies to background speech**: agent onsets with background speech in the
  ``window_s`` before them and no caller speech in that window;
- **barge-in handling**: for each caller onset that falls inside agent speech, how
  long the agent went on speaking after it;
- **dead air**: gaps of more than ``dead_air_s`` in which neither side speaks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

Segment = tuple[float, float]

DEAD_AIR_S = 3.0
BACKGROUND_WINDOW_S = 2.0


def merged(segments: Iterable[Segment], gap_s: float = 0.0) -> list[Segment]:
    """Segments sorted and joined where they touch or lie less than ``gap_s`` apart."""
    out: list[Segment] = []
    for start, end in sorted((float(a), float(b)) for a, b in segments if b > a):
        if out and start - out[-1][1] <= gap_s:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def total(segments: Iterable[Segment]) -> float:
    return sum(b - a for a, b in merged(segments))


def intersection(a: Sequence[Segment], b: Sequence[Segment]) -> list[Segment]:
    """The intervals where both ``a`` and ``b`` hold."""
    out: list[Segment] = []
    left, right = merged(a), merged(b)
    i = j = 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        if end > start:
            out.append((start, end))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) by linear interpolation; ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def response_latencies(caller: Sequence[Segment], agent: Sequence[Segment]) -> list[float]:
    """Seconds from each caller segment's end to the agent's next onset before the caller's
    next segment (segments with no such reply are left out; ``missed_replies`` counts them)."""
    callers = merged(caller)
    onsets = sorted(a for a, _ in merged(agent))
    out: list[float] = []
    for k, (_, end) in enumerate(callers):
        limit = callers[k + 1][0] if k + 1 < len(callers) else float("inf")
        reply = next((t for t in onsets if end <= t < limit), None)
        if reply is not None:
            out.append(reply - end)
    return out


def missed_replies(caller: Sequence[Segment], agent: Sequence[Segment]) -> int:
    """Caller segments after which the agent did not start before the caller spoke again
    (the last caller segment counts only if the agent never spoke after it either)."""
    return len(merged(caller)) - len(response_latencies(caller, agent))


def overlap(agent: Sequence[Segment], caller: Sequence[Segment]) -> tuple[float, int]:
    """(seconds, intervals) of agent speech over caller speech."""
    both = intersection(agent, caller)
    return sum(b - a for a, b in both), len(both)


def background_replies(
    agent: Sequence[Segment],
    caller: Sequence[Segment],
    background: Sequence[Segment],
    window_s: float = BACKGROUND_WINDOW_S,
) -> int:
    """Agent onsets preceded within ``window_s`` by background speech and no caller speech."""
    count = 0
    callers, backgrounds = merged(caller), merged(background)
    for onset, _ in merged(agent):
        window = [(onset - window_s, onset)]
        if intersection(window, backgrounds) and not intersection(window, callers):
            count += 1
    return count


def barge_in_tails(agent: Sequence[Segment], caller: Sequence[Segment]) -> list[float]:
    """For each caller onset inside agent speech: seconds the agent kept speaking after it."""
    agents = merged(agent)
    out: list[float] = []
    for onset, _ in merged(caller):
        for start, end in agents:
            if start < onset < end:
                out.append(end - onset)
                break
    return out


def dead_air(
    speech: Sequence[Segment], duration_s: float, threshold_s: float = DEAD_AIR_S
) -> list[Segment]:
    """Silences longer than ``threshold_s`` in [0, duration_s] where nobody speaks."""
    gaps: list[Segment] = []
    cursor = 0.0
    for start, end in merged(speech):
        if start - cursor > threshold_s:
            gaps.append((cursor, start))
        cursor = max(cursor, end)
    if duration_s - cursor > threshold_s:
        gaps.append((cursor, duration_s))
    return gaps


@dataclass(frozen=True)
class CallMetrics:
    """One call's turn-taking and latency figures (seconds unless counted)."""

    duration_s: float
    audio_in_s: float  # line audio the agent received
    audio_out_s: float  # agent audio that carried speech
    caller_speech_s: float
    latency_median_s: float | None
    latency_p90_s: float | None
    latencies_s: tuple[float, ...]
    missed_replies: int
    overlap_s: float
    overlap_count: int
    background_replies: int
    barge_ins: int
    barge_in_tail_median_s: float | None
    barge_in_tail_max_s: float | None
    dead_air_count: int
    dead_air_s: float

    def as_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["latencies_s"] = list(self.latencies_s)
        return out


def call_metrics(
    caller: Sequence[Segment],
    agent: Sequence[Segment],
    background: Sequence[Segment],
    duration_s: float,
    *,
    audio_in_s: float | None = None,
    window_s: float = BACKGROUND_WINDOW_S,
    dead_air_s: float = DEAD_AIR_S,
) -> CallMetrics:
    """Every metric of one call from its three speech timelines."""
    latencies = response_latencies(caller, agent)
    seconds, count = overlap(agent, caller)
    tails = barge_in_tails(agent, caller)
    silences = dead_air([*caller, *agent], duration_s, dead_air_s)
    return CallMetrics(
        duration_s=round(duration_s, 3),
        audio_in_s=round(duration_s if audio_in_s is None else audio_in_s, 3),
        audio_out_s=round(total(agent), 3),
        caller_speech_s=round(total(caller), 3),
        latency_median_s=_round(percentile(latencies, 50)),
        latency_p90_s=_round(percentile(latencies, 90)),
        latencies_s=tuple(round(x, 3) for x in latencies),
        missed_replies=missed_replies(caller, agent),
        overlap_s=round(seconds, 3),
        overlap_count=count,
        background_replies=background_replies(agent, caller, background, window_s),
        barge_ins=len(tails),
        barge_in_tail_median_s=_round(percentile(tails, 50)),
        barge_in_tail_max_s=_round(max(tails) if tails else None),
        dead_air_count=len(silences),
        dead_air_s=round(sum(b - a for a, b in silences), 3),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
