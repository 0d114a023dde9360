"""The environment with real speech in the loop, and audio observations for speech-native agents."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vamos_env  # noqa: F401  (registers the environment)

pytestmark = pytest.mark.audio


def test_audio_channel_gives_recognised_text_and_the_mixed_audio() -> None:
    env = gym.make("VamosEnergy-v0", channel="audio", audio_observations=True)
    obs, info = env.reset(seed=0, options={"background": "clean", "persona": "calm"})
    assert info["channel"] == "audio"
    assert isinstance(obs, str) and len(obs.split()) >= 3
    audio = info["caller_audio"]
    assert isinstance(audio, np.ndarray) and audio.dtype == np.int16
    assert info["caller_audio_rate"] == 16_000
    assert len(audio) > 16_000  # more than a second of speech
    obs, _, _, _, info = env.step({"type": "say", "text": "Can I have your account number?"})
    assert isinstance(obs, str)
    assert "caller_audio" in info


def test_audio_observations_need_the_audio_channel() -> None:
    with pytest.raises(ValueError, match="audio_observations"):
        gym.make("VamosEnergy-v0", audio_observations=True)
