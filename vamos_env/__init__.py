"""vamos-env: a Gymnasium environment for customer-service voice agents on a utility billing line."""

from __future__ import annotations

__version__ = "0.1.0"
