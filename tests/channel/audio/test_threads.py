"""A recognition is the same whatever BLAS thread count the process runs with.

OpenBLAS sums Whisper's feature matrix product in another order with several threads than
with one, which moved a reading's score by 0.09 nats on this project's machine and flipped
a close decode between a call under Ray (its workers run with one thread) and the same
call replayed in one process. ``engines.one_blas_thread`` holds every recognition to one.
"""

from __future__ import annotations

import numpy as np
import pytest


def _clip() -> np.ndarray:
    from vamos_env.channel.audio import engines
    from vamos_env.duplex.cascade import AGENT_VOICE

    said = engines.synthesize(
        "Your supply comes from Quillstone Energy, at 9.89 cents per kilowatt-hour.", AGENT_VOICE
    )
    noise = np.random.default_rng(0).normal(0.0, 0.01, len(said))
    return (said + noise).astype(np.float32)


@pytest.mark.audio
def test_a_score_and_a_transcript_do_not_depend_on_the_blas_threads() -> None:
    from threadpoolctl import threadpool_limits

    from vamos_env.channel.audio import engines
    from vamos_env.channel.audio.engines import ReadingScorer

    clip = _clip()
    reading = " Your supply comes from quilstone energy at $0.89 per kilowatt hour."
    got = {}
    for threads in (1, 2, 4):
        with threadpool_limits(limits=threads, user_api="blas"):
            scorer = ReadingScorer(engines._model("whisper-tiny.en"), clip)
            words = engines.transcribe_timed(clip)
            got[threads] = (scorer.score(reading), [(w.start_s, w.end_s, w.text) for w in words])
    assert got[2] == got[1]
    assert got[4] == got[1]
