"""Every turn-taking and latency metric on constructed timelines with known timings."""

from __future__ import annotations

import pytest

from vamos_env.duplex.metrics import (
    background_replies,
    barge_in_tails,
    call_metrics,
    dead_air,
    intersection,
    merged,
    missed_replies,
    overlap,
    percentile,
    response_latencies,
)


def test_merged_joins_touching_and_close_segments_only() -> None:
    assert merged([(3.0, 4.0), (0.0, 1.0), (1.0, 2.0)]) == [(0.0, 2.0), (3.0, 4.0)]
    assert merged([(0.0, 1.0), (1.4, 2.0)], gap_s=0.5) == [(0.0, 2.0)]
    assert merged([(0.0, 1.0), (1.6, 2.0)], gap_s=0.5) == [(0.0, 1.0), (1.6, 2.0)]
    assert merged([(2.0, 2.0)]) == []


def test_intersection_of_interleaved_timelines() -> None:
    assert intersection([(0, 5), (10, 15)], [(4, 11), (14, 20)]) == [(4, 5), (10, 11), (14, 15)]


def test_percentiles_interpolate() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    values = [float(x) for x in range(1, 11)]  # 1..10
    assert percentile(values, 90) == pytest.approx(9.1)


def test_response_latency_is_caller_end_to_agent_first_audio() -> None:
    caller = [(0.0, 2.0), (5.0, 7.0), (12.0, 13.0)]
    agent = [(2.8, 4.0), (8.5, 10.0), (10.5, 11.0)]  # the last caller turn gets no reply
    assert response_latencies(caller, agent) == pytest.approx([0.8, 1.5])
    assert missed_replies(caller, agent) == 1


def test_an_agent_that_starts_before_the_caller_ends_has_no_latency_for_that_turn() -> None:
    caller = [(0.0, 3.0), (6.0, 8.0)]
    agent = [(2.5, 5.0), (9.0, 10.0)]  # talks over the first turn's end
    assert response_latencies(caller, agent) == pytest.approx([1.0])
    assert missed_replies(caller, agent) == 1


def test_overlap_seconds_and_count() -> None:
    caller = [(0.0, 4.0), (10.0, 12.0)]
    agent = [(3.0, 5.0), (9.5, 10.5), (11.5, 13.0), (20.0, 21.0)]
    seconds, count = overlap(agent, caller)
    assert seconds == pytest.approx(1.0 + 0.5 + 0.5)
    assert count == 3
    assert overlap([(5.0, 6.0)], caller) == (0.0, 0)


def test_replies_to_background_speech_need_background_and_no_caller_in_the_window() -> None:
    caller = [(0.0, 2.0)]
    background = [(20.0, 23.0), (40.0, 41.0)]
    agent = [
        (2.7, 4.0),  # answers the caller: caller speech in the window
        (23.5, 25.0),  # answers the television: 0.5 s after it, no caller
        (44.0, 45.0),  # 3 s after background speech: outside the 2 s window
    ]
    assert background_replies(agent, caller, background) == 1
    assert background_replies(agent, caller, background, window_s=4.0) == 2


def test_barge_in_tail_is_how_long_the_agent_went_on() -> None:
    agent = [(0.0, 10.0), (20.0, 22.0)]
    caller = [(4.0, 6.0), (12.0, 13.0), (21.5, 23.0)]
    assert barge_in_tails(agent, caller) == pytest.approx([6.0, 0.5])
    # A caller who starts exactly when the agent stops did not cut in.
    assert barge_in_tails([(0.0, 2.0)], [(2.0, 3.0)]) == []


def test_dead_air_is_silence_of_nobody_longer_than_three_seconds() -> None:
    speech = [(1.0, 2.0), (2.5, 4.0), (8.0, 9.0), (11.5, 13.0)]
    assert dead_air(speech, duration_s=20.0) == [(4.0, 8.0), (13.0, 20.0)]
    assert dead_air(speech, duration_s=15.0) == [(4.0, 8.0)]
    assert dead_air([], duration_s=2.0) == []


def test_call_metrics_gathers_every_figure() -> None:
    caller = [(1.0, 3.0), (6.0, 8.0), (9.0, 12.0)]
    agent = [(3.5, 5.5), (9.0, 11.0), (13.0, 14.0)]
    background = [(8.0, 8.5)]
    m = call_metrics(caller, agent, background, duration_s=20.0)
    assert m.latencies_s == (0.5, 1.0)  # the second caller turn was answered by nobody
    assert m.latency_median_s == pytest.approx(0.75)
    assert m.latency_p90_s == pytest.approx(0.95)
    assert m.missed_replies == 1
    assert (m.overlap_s, m.overlap_count) == (pytest.approx(2.0), 1)
    assert m.barge_ins == 0  # the caller started with the agent, not inside its speech
    assert m.background_replies == 0  # caller speech in the window of every onset
    assert (m.dead_air_count, m.dead_air_s) == (1, pytest.approx(6.0))
    assert (m.audio_out_s, m.caller_speech_s, m.duration_s) == (5.0, 7.0, 20.0)
    assert m.as_dict()["latencies_s"] == [0.5, 1.0]
