"""The agent's 16 tools (DOMAIN.md section 4), reached through ``CallSession.call``.

- ``arguments``: strict argument models, the source of the JSON schemas;
- ``catalog``: the registry (``TOOLS``, ``TOOL_NAMES``) and ``tool_schemas()``;
- ``verification``: the gate (verify_caller, Soundex, second factors);
- ``account``, ``bills``, ``arrangements``: the tool implementations;
- ``records``: the verified account read through the service clients (DOMAIN.md 3a);
- ``billing``: the Stripe SDK's raw requests (plain JSON answers, for speed);
- ``context``: the state the tools share during one call.
"""

from __future__ import annotations

from vamos_env.envs.energy.tools.catalog import TOOL_NAMES, TOOLS, ToolSpec, tool_schemas

__all__ = ["TOOLS", "TOOL_NAMES", "ToolSpec", "tool_schemas"]
