"""Duplex tests that speak need the audio extra: without it they skip, saying why."""

from __future__ import annotations

import pytest

from vamos_env.channel.audio.engines import missing_reason


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = missing_reason()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("audio") and "duplex" in str(item.fspath):
            item.add_marker(pytest.mark.skip(reason=reason))
