"""vamos-env: a Gymnasium environment for customer-service voice agents (utility billing)."""

from __future__ import annotations

__version__ = "0.1.0"


def _register() -> None:
    # Registered on import with a lazy entry point: importing vamos_env stays cheap, and
    # gym.make("VamosEnergy-v0") or gym.make("vamos_env:VamosEnergy-v0") both work.
    from gymnasium.envs.registration import register, registry

    if "VamosEnergy-v0" not in registry:
        register(
            id="VamosEnergy-v0",
            entry_point="vamos_env.envs.energy.env:VamosEnergyEnv",
            disable_env_checker=True,  # our spaces are text; check_env passes (tests run it)
        )
    if "VamosEnergyDuplex-v0" not in registry:
        # Full-duplex audio (needs the audio extra; docs/duplex.md).
        register(
            id="VamosEnergyDuplex-v0",
            entry_point="vamos_env.duplex.env:VamosEnergyDuplexEnv",
            disable_env_checker=True,  # a text part in its spaces; check_env passes (tests run it)
        )


_register()
