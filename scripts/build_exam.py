"""Build the task files: ``python scripts/build_exam.py [--seed N] [--outcomes FILE] [--out DIR]``.

The same as ``vamos tasks build``; see ``vamos_env.cli.tasks``.
"""

from __future__ import annotations

import sys

from vamos_env.cli.tasks import run

if __name__ == "__main__":
    raise SystemExit(run(["build", *sys.argv[1:]]))
