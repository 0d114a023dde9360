"""The bridges' shared audio: the streaming resampler, PCM16 and mu-law bytes, playback.

These are the guarantees the Realtime, Gemini Live and media-stream bridges each tested of
their own resampler and playback queue before they shared one."""

from __future__ import annotations

import numpy as np
import pytest

from vamos_env.bridges.audio import (
    Playback,
    Resampler,
    mulaw_audio,
    mulaw_bytes,
    pcm_audio,
    pcm_bytes,
    resample_whole,
)
from vamos_env.bridges.mediastream import MULAW_FRAME_BYTES, PCM_FRAME_BYTES

RATE = 16_000
FRAME = 320


def level_db(x: np.ndarray) -> float:
    return float(20 * np.log10(max(np.sqrt(np.mean(np.square(x))), 1e-12)))


def tone(seconds: float, hz: float = 1000.0, dbfs: float = -20.0, rate: int = RATE) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return np.sqrt(2) * 10 ** (dbfs / 20) * np.sin(2 * np.pi * hz * t)


# -- the resampler ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rate_in", "rate_out"), [(16_000, 24_000), (24_000, 16_000), (16_000, 8_000), (8_000, 16_000)]
)
def test_resampler_in_chunks_equals_the_whole(rate_in: int, rate_out: int) -> None:
    x = tone(1.0, 440.0, rate=rate_in)
    whole = Resampler(rate_in, rate_out)(x)
    chunks = Resampler(rate_in, rate_out)
    pieces = np.concatenate([chunks(x[i : i + 317]) for i in range(0, len(x), 317)])
    assert len(whole) == len(pieces) == rate_out
    assert np.array_equal(whole, pieces)  # no click at any chunk edge


def test_resampler_keeps_the_pitch_and_a_round_trip_gives_the_signal_back() -> None:
    x = 0.1 * np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE)
    up = Resampler(RATE, 24_000)(x)
    spectrum = np.abs(np.fft.rfft(up[240:]))
    peak = np.fft.rfftfreq(len(up) - 240, 1 / 24_000)[np.argmax(spectrum)]
    assert abs(peak - 440) < 2
    back = Resampler(24_000, RATE)(up)
    lag = np.argmax(np.correlate(back[4000:4400], x[4000:4200], mode="valid"))
    assert np.abs(back[4000 + lag : 12000 + lag] - x[4000:12000]).max() < 0.01


def test_resampler_to_16khz_tracks_the_signal_at_its_stated_delay() -> None:
    t = np.arange(24_000) / 24_000
    signal = 0.5 * np.sin(2 * np.pi * 300 * t)
    pieces = Resampler(24_000)  # to the line's 16 kHz
    chunked = np.concatenate([pieces(signal[a : a + 701]) for a in range(0, len(signal), 701)])
    assert len(chunked) == 16_000
    expected = 0.5 * np.sin(2 * np.pi * 300 * (np.arange(16_000) / 16_000 - pieces.delay_s))
    assert np.max(np.abs(chunked[200:-200] - expected[200:-200])) < 0.01


def test_flush_pushes_out_the_tail_and_reset_starts_a_new_stream() -> None:
    r = Resampler(24_000, RATE)
    x = tone(0.1, 300.0, rate=24_000)
    body = r(x)
    assert len(body) == round(len(x) * 2 / 3)
    tail = r.flush()
    assert len(tail) > r.delay_out and np.abs(tail[: r.delay_out]).max() > 0.01
    r.reset()
    assert np.array_equal(r(x), Resampler(24_000, RATE)(x))
    same = Resampler(RATE, RATE)
    assert np.array_equal(same(x), x) and len(same.flush()) == 0


def test_resample_whole_is_aligned_and_exactly_long() -> None:
    x = 0.1 * np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE)
    y = resample_whole(x, RATE, 24_000)
    assert len(y) == 24_000
    expected = 0.1 * np.sin(2 * np.pi * 440 * np.arange(24_000) / 24_000)
    assert np.abs(y[200:-200] - expected[200:-200]).max() < 0.001


# -- bytes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("hz", [300.0, 1000.0, 3000.0])
@pytest.mark.parametrize("dbfs", [-10.0, -30.0])
def test_mulaw_round_trip_keeps_the_level(hz: float, dbfs: float) -> None:
    signal = tone(1.0, hz, dbfs)
    down, up = Resampler(RATE, 8000), Resampler(8000, RATE)
    frames = [mulaw_bytes(down(signal[i : i + FRAME])) for i in range(0, len(signal), FRAME)]
    assert {len(f) for f in frames} == {MULAW_FRAME_BYTES}
    back = np.concatenate([up(mulaw_audio(f)) for f in frames])
    assert len(back) == len(signal)
    assert abs(level_db(back[1600:]) - dbfs) < 0.5


def test_mulaw_band_limits_what_8_khz_cannot_carry() -> None:
    high = tone(0.5, 6000.0, -10.0)
    down = Resampler(RATE, 8000)
    narrow = np.concatenate([down(high[i : i + FRAME]) for i in range(0, len(high), FRAME)])
    assert level_db(narrow[800:]) < -50  # no alias of 6 kHz at 2 kHz


def test_pcm_frames_are_960_bytes_and_keep_the_level() -> None:
    signal = tone(1.0, 440.0, -20.0)
    down, up = Resampler(RATE, 24000), Resampler(24000, RATE)
    frames = [pcm_bytes(down(signal[i : i + FRAME])) for i in range(0, len(signal), FRAME)]
    assert {len(f) for f in frames} == {PCM_FRAME_BYTES}
    # Any chunking on the way back gives the same samples (the phase is the stream's).
    joined = b"".join(frames)
    odd_chunks = [joined[i : i + 1234] for i in range(0, len(joined), 1234)]
    back = np.concatenate([up(pcm_audio(c)) for c in odd_chunks])
    whole = Resampler(24000, RATE)(pcm_audio(joined))
    assert np.allclose(back, whole)
    assert abs(level_db(back[1600:]) - (-20.0)) < 0.3


def test_pcm_bytes_are_little_endian_and_clip() -> None:
    data = pcm_bytes(np.array([0.0, 0.5, -1.0, 2.0]))
    assert data == np.array([0, 16384, -32767, 32767], dtype="<i2").tobytes()
    assert np.allclose(pcm_audio(data), [0.0, 0.5, -32767 / 32768, 32767 / 32768], atol=1e-4)


# -- playback -------------------------------------------------------------------------------------
def test_playback_marks_wait_for_the_audio_before_them_and_clear_drops() -> None:
    p = Playback()
    p.mark("first")  # nothing queued before it: done at the next take
    p.push(np.ones(500))
    p.mark("second")
    audio = p.take(320)
    assert p.marks_done() == ["first"] and audio.sum() == 320
    audio = p.take(320)
    assert p.marks_done() == ["second"] and audio.sum() == 180
    p.push(np.ones(1000))
    p.mark("third")
    p.push(np.ones(1000))
    p.mark("fourth")
    p.take(320)
    assert p.marks_done() == []
    p.clear()
    assert p.marks_done() == ["third", "fourth"]
    audio = p.take(320)
    assert not audio.any() and p.marks_done() == [] and p.pending == 0


def test_playback_counts_each_items_played_samples_and_clear_names_the_dropped() -> None:
    p = Playback()
    p.push(np.ones(300), "a")
    p.push(np.ones(100), "b")
    p.push(np.ones(500), "b")
    p.push(np.ones(200), "c")
    p.take(320)
    p.take(320)
    assert p.played_of == {"a": 300, "b": 340} and p.pending == 1100 - 640
    assert p.clear() == ["b", "c"]
    assert p.pending == 0 and not p.take(320).any()
    assert p.played_of == {"a": 300, "b": 340}  # what was heard stays counted
