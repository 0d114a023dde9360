"""Type-check the whole distribution as it is installed.

setuptools maps the top-level folders envs/, agents/ and wrappers/ to
vamos_env.envs, vamos_env.agents and vamos_env.wrappers, which mypy cannot
follow through an editable install. This lays out the installed package shape
as a tree of symbolic links under build/typecheck and runs mypy on it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPED = {"envs": "envs", "agents": "agents", "wrappers": "wrappers"}


def main() -> int:
    tree = ROOT / "build" / "typecheck"
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / "vamos_env"
    package.mkdir(parents=True)
    for entry in (ROOT / "vamos_env").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in MAPPED.items():
        (package / name).symlink_to(ROOT / folder)
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(ROOT / "pyproject.toml"),
        "-p",
        "vamos_env",
    ]
    return subprocess.call(command, cwd=tree)


if __name__ == "__main__":
    raise SystemExit(main())
