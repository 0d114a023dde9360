"""Fixtures for the grading tests: the graded example set, built on the seeded world.

The builder lives in ``example_set.py`` and the fake OpenAI-compatible server in
``fake_openai.py`` (loaded by path: the tests folder is not a package); ``example`` is
parametrized over every example of ``examples/*.yaml``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vamos_env.envs.energy.seed import default_snapshot


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


example_set = _load("example_set")
fake_openai = _load("fake_openai")
EXAMPLES = example_set.load_examples()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "example" in metafunc.fixturenames:
        metafunc.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])


@pytest.fixture(scope="session")
def world() -> Any:
    return example_set.ExampleWorld(default_snapshot())


@pytest.fixture(scope="session")
def examples() -> list[Any]:
    return list(EXAMPLES)


@pytest.fixture
def fake_chat() -> Iterator[Callable[[Any], Any]]:
    """Start a local OpenAI-compatible server answering with ``reply(request_body)``."""
    servers: list[Any] = []

    def start(reply: Any) -> Any:
        server = fake_openai.FakeChatServer(reply).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def built(world: Any, examples: list[Any]) -> Callable[[str], Any]:
    """An example of the graded set, built, by id."""
    by_id = {e.id: e for e in examples}
    return lambda example_id: world.build(by_id[example_id])
