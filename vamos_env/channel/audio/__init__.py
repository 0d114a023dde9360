"""The offline audio channel (optional extra ``vamos-env[audio]``): real speech in the loop.

``AudioChannel`` has the text channel's ``to_agent``/``to_caller`` and plugs into
the episode as is; ``calibrate`` measures it and writes the text channel's
parameter file. Importing this package needs only numpy; the speech engines load
on first use, and ``missing_reason()`` says why they cannot.
"""

from __future__ import annotations

from vamos_env.channel.audio.backgrounds import REFERENCE_RMS, BackgroundStream
from vamos_env.channel.audio.calibration import (
    SAMPLE_CORPUS,
    calibrate,
    exam_corpus,
    register,
    shipped_corpus,
)
from vamos_env.channel.audio.channel import AudioChannel, detect_speech, spoken_form
from vamos_env.channel.audio.engines import missing_reason

__all__ = [
    "REFERENCE_RMS",
    "SAMPLE_CORPUS",
    "AudioChannel",
    "BackgroundStream",
    "calibrate",
    "detect_speech",
    "exam_corpus",
    "missing_reason",
    "register",
    "shipped_corpus",
    "spoken_form",
]
