"""Every package folder is listed in pyproject.toml, so a built wheel carries it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = {"envs": "vamos_env.envs", "agents": "vamos_env.agents", "wrappers": "vamos_env.wrappers"}


def test_every_package_folder_is_declared() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = set(config["tool"]["setuptools"]["packages"])
    found = set()
    for init in (ROOT / "vamos_env").rglob("__init__.py"):
        found.add(".".join(init.parent.relative_to(ROOT).parts))
    for folder, package in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rest = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rest)))
    assert found - declared == set(), "add these to [tool.setuptools] packages"
    assert declared - found == set(), "these declared packages have no folder"
    assert config["tool"]["setuptools"]["package-dir"] == {v: k for k, v in MAPPED.items()}
