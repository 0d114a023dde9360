"""Fixtures for the runner's tests: test stacks by path, and one local Ray for the session.

The test stacks live in ``stacks.py`` and are named the way a user names a stack of their
own, ``NAME=path/to/file.py:factory``, so Ray workers and subprocesses load them by path.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

STACKS = Path(__file__).with_name("stacks.py")


@pytest.fixture(scope="session")
def test_stack() -> Any:
    """``test_stack(name, factory)`` -> ``NAME=/abs/tests/runner/stacks.py:factory``."""

    def named(name: str, factory: str) -> str:
        return f"{name}={STACKS}:{factory}"

    return named


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """One local Ray (two CPUs) shared by every Ray test of the session."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    if started:
        ray.init(
            num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING
        )
    yield ray
    if started:
        ray.shutdown()
