"""The audio tests need the optional extra; without it they skip with the reason."""

from __future__ import annotations

import pytest

from vamos_env.channel.audio.engines import missing_reason


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "audio: needs the vamos-env[audio] extra (slow, real speech)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = missing_reason()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("audio"):
            item.add_marker(pytest.mark.skip(reason=reason))
