"""Where the services are and how to authenticate, as the published agents expect it.

Agents written for the published benchmark read ``STRIPE_API_BASE``,
``STRIPE_API_KEY``, ``FINERACT_API_BASE``, ``FINERACT_USER``,
``FINERACT_PASSWORD`` and ``FINERACT_TENANT`` (both bases are server roots), and
the frozen time from ``RORY_REFERENCE_TIME``. ``ServiceEndpoints`` is that set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from vamos_env import clock

DEFAULT_STRIPE_KEY = "sk_test_vamos"
DEFAULT_FINERACT_USER = "mifos"
DEFAULT_FINERACT_PASSWORD = "password"
DEFAULT_FINERACT_TENANT = "default"


@dataclass(frozen=True, slots=True)
class ServiceEndpoints:
    stripe_api_base: str
    stripe_api_key: str = DEFAULT_STRIPE_KEY
    fineract_api_base: str = ""
    fineract_user: str = DEFAULT_FINERACT_USER
    fineract_password: str = DEFAULT_FINERACT_PASSWORD
    fineract_tenant: str = DEFAULT_FINERACT_TENANT
    # A local Fineract serves HTTPS with a self-signed certificate; FINERACT_VERIFY_TLS=0
    # accepts it. Never turn verification off for a remote server.
    fineract_verify_tls: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceEndpoints:
        env = os.environ if environ is None else environ
        missing = [k for k in ("STRIPE_API_BASE", "FINERACT_API_BASE") if not env.get(k)]
        if missing:
            raise ValueError(
                f"expected environment variables {', '.join(missing)} to name the service "
                "roots (e.g. http://127.0.0.1:8111); got them unset"
            )
        return cls(
            stripe_api_base=env["STRIPE_API_BASE"].rstrip("/"),
            stripe_api_key=env.get("STRIPE_API_KEY", DEFAULT_STRIPE_KEY),
            fineract_api_base=env["FINERACT_API_BASE"].rstrip("/"),
            fineract_user=env.get("FINERACT_USER", DEFAULT_FINERACT_USER),
            fineract_password=env.get("FINERACT_PASSWORD", DEFAULT_FINERACT_PASSWORD),
            fineract_tenant=env.get("FINERACT_TENANT", DEFAULT_FINERACT_TENANT),
            fineract_verify_tls=env.get("FINERACT_VERIFY_TLS", "1").lower() not in ("0", "false"),
        )

    def as_env(self) -> dict[str, str]:
        """The variables an outside agent needs, in the published benchmark's names."""
        return {
            "STRIPE_API_BASE": self.stripe_api_base,
            "STRIPE_API_KEY": self.stripe_api_key,
            "FINERACT_API_BASE": self.fineract_api_base,
            "FINERACT_USER": self.fineract_user,
            "FINERACT_PASSWORD": self.fineract_password,
            "FINERACT_TENANT": self.fineract_tenant,
            "RORY_REFERENCE_TIME": clock.FROZEN_ISO,
        }
