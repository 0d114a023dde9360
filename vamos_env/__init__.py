"""vamos-env: a Gymnasium environment for customer-service voice agents (utility billing)."""

from __future__ import annotations

__version__ = "0.1.0"
