"""What a calibration's figures depend on: the recogniser's libraries, the voices and the CPU.

Whisper runs in CTranslate2's int8 kernels and the detector and Piper in
onnxruntime; both pick their kernels by the CPU's instruction sets, and a new
release may change a kernel. numpy does the mixing, resampling and the
recogniser's features. An exact transcript is a promise only for the same
libraries on the same kind of CPU, so the parameter file records them
(``recorded_on``) and the shipped-file test compares figure for figure only
when they match; elsewhere it compares within statistical bands.
"""

from __future__ import annotations

import importlib.metadata
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

# The distributions whose versions decide transcripts (pinned in the audio extra).
LIBRARIES: tuple[str, ...] = (
    "ctranslate2",
    "onnxruntime",
    "faster-whisper",
    "piper-tts",
    "numpy",
)
# The instruction sets CTranslate2 and onnxruntime dispatch on (as /proc/cpuinfo names them).
ISA_FLAGS: tuple[str, ...] = (
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx_vnni",
    "amx_tile",
    "amx_int8",
)


def library_versions() -> dict[str, str]:
    """Installed versions of ``LIBRARIES`` ("absent" for one not installed)."""
    versions: dict[str, str] = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def _package_version(package: str, binary: str) -> str:
    """Debian's version of a package; "absent" when its binary is not on PATH."""
    if shutil.which(binary) is None:
        return "absent"
    if shutil.which("dpkg-query") is None:
        return "installed"
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", package],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "installed"
    return out.stdout.strip() or "installed"


def voice_versions() -> dict[str, str]:
    """Debian's synthesizers (cafe and television voices, the angry and sceptic callers)."""
    return {name: _package_version(name, name) for name in ("espeak-ng", "flite")}


def cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """The CPU's model name and the instruction sets the kernels dispatch on."""
    model, flags = platform.processor() or platform.machine(), set[str]()
    try:
        text = cpuinfo.read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            model = value.strip()
        elif key.strip() == "flags":
            flags = set(value.split())
        if model and flags:
            break
    return {"model": model, "isa": [f for f in ISA_FLAGS if f in flags]}


def recorded_on() -> dict[str, Any]:
    """Everything a calibration's exact figures depend on, as the parameter file records it."""
    return {"cpu": cpu(), "libraries": library_versions(), "voices": voice_versions()}


def differences(recorded: dict[str, Any], here: dict[str, Any]) -> list[str]:
    """What differs between a file's ``recorded_on`` and this machine, one line each."""
    out: list[str] = []
    for section in ("cpu", "libraries", "voices"):
        a, b = recorded.get(section, {}), here.get(section, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append(f"{section}.{key}: recorded {a.get(key)!r}, here {b.get(key)!r}")
    return out
