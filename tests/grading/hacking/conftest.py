"""Fixtures for the reward-hacking suite: the tricks module (loaded by path) and one env."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from vamos_env.envs.energy.env import VamosEnergyEnv


def _load(name: str, file: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tricks = _load("hacking_tricks", "tricks.py")


@pytest.fixture(scope="session")
def env() -> VamosEnergyEnv:
    # The suite measures the grader, not the ear: the caller's words arrive as said.
    return VamosEnergyEnv(recogniser="ideal")
