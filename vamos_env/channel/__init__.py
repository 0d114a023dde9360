"""What each side of a call hears: the text channel (fast, seeded) and, later, the audio channel."""

from __future__ import annotations

from vamos_env.channel.base import Channel
from vamos_env.channel.parameters import (
    BACKGROUNDS,
    DEFAULT_LEVEL_DB,
    BackgroundName,
    ChannelParameters,
    shipped_parameters,
)
from vamos_env.channel.rates import MeasuredRates, measure_rates
from vamos_env.channel.recognition import word_error_rate, word_errors
from vamos_env.channel.text import ChannelEvent, TextChannel

__all__ = [
    "BACKGROUNDS",
    "DEFAULT_LEVEL_DB",
    "BackgroundName",
    "Channel",
    "ChannelEvent",
    "ChannelParameters",
    "MeasuredRates",
    "TextChannel",
    "measure_rates",
    "shipped_parameters",
    "word_error_rate",
    "word_errors",
]
