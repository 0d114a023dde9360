"""``vamos eval`` as a script: Ray rollouts of stacks x tasks x repeats into a run folder.

    .venv/bin/python scripts/rollout.py --stacks reference,naive --tasks exam --repeats 3 \\
        --out runs/NAME [--address ray://head:10001] [--report]

Same arguments as ``vamos eval`` (see ``--help``).
"""

from __future__ import annotations

import sys

from vamos_env.cli.evaluation import main

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
