"""Full-duplex audio calls: both sides stream 20 ms frames on a simulated clock.

``engine.DuplexCall`` runs one call (the caller's voice, the room, the line, the
caller's hearing and turn-taking, tools and transcript on one clock); ``metrics`` has
the turn-taking and latency figures; ``line`` the telephony line conditions;
``cascade.CascadeAgent`` the local voice stack; ``env.VamosEnergyDuplexEnv`` the
Gymnasium environment (``VamosEnergyDuplex-v0``). Importing this package needs only
numpy; the speech engines (the audio extra) load on first use. See docs/duplex.md.
"""

from __future__ import annotations

from vamos_env.duplex.line import LINES, LineCondition, line_condition
from vamos_env.duplex.metrics import CallMetrics, call_metrics

__all__ = ["LINES", "CallMetrics", "LineCondition", "call_metrics", "line_condition"]
