"""``python -m vamos_env.cli``: the same as the ``vamos`` console script."""

from __future__ import annotations

from vamos_env.cli import main

raise SystemExit(main())
