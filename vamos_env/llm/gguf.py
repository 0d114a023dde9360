"""Read one string from a GGUF file's metadata (the chat template) without loading the model.

A GGUF file opens with a header (magic ``GGUF``, version, tensor count, key count) and
then its key/value pairs, each a length-prefixed key, a value type and the value. Only
what reaching a key needs is decoded here: scalars are skipped by their width, strings by
their length, arrays element by element (the tokenizer's vocabulary is an array of some
150,000 strings, so a key after it costs a pass over them, about 0.1 s).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

MAGIC = b"GGUF"
CHAT_TEMPLATE_KEY = "tokenizer.chat_template"
# Value types of the GGUF specification (version 2 and 3), by their code.
_WIDTH = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands; the message says what it found."""


def _read(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise GGUFError(f"expected {size} more bytes of GGUF metadata, got {len(data)}")
    return data


def _u32(handle: BinaryIO) -> int:
    value: int = struct.unpack("<I", _read(handle, 4))[0]
    return value


def _u64(handle: BinaryIO) -> int:
    value: int = struct.unpack("<Q", _read(handle, 8))[0]
    return value


def _string(handle: BinaryIO) -> bytes:
    return _read(handle, _u64(handle))


def _skip(handle: BinaryIO, kind: int) -> None:
    if kind in _WIDTH:
        handle.seek(_WIDTH[kind], 1)
    elif kind == _STRING:
        handle.seek(_u64(handle), 1)
    elif kind == _ARRAY:
        inner, count = _u32(handle), _u64(handle)
        if inner in _WIDTH:
            handle.seek(_WIDTH[inner] * count, 1)
        else:
            for _ in range(count):
                _skip(handle, inner)
    else:
        raise GGUFError(f"expected a GGUF value type 0-12, got {kind}")


def metadata_string(path: str | Path, key: str) -> str | None:
    """The string stored under ``key`` in the file's metadata, or None when it has none."""
    with open(path, "rb") as handle:
        magic = handle.read(4)
        if magic != MAGIC:
            raise GGUFError(f"expected a GGUF file (magic {MAGIC!r}) at {path}, got {magic!r}")
        version = _u32(handle)
        if version not in (2, 3):
            raise GGUFError(f"expected GGUF version 2 or 3 at {path}, got {version}")
        _u64(handle)  # tensor count
        for _ in range(_u64(handle)):
            name = _string(handle).decode("utf-8", errors="replace")
            kind = _u32(handle)
            if name == key:
                if kind != _STRING:
                    raise GGUFError(f"expected {key} to be a string, got value type {kind}")
                return _string(handle).decode("utf-8")
            _skip(handle, kind)
    return None


def chat_template(path: str | Path) -> str | None:
    """The chat template embedded in a GGUF file, or None when it embeds none."""
    return metadata_string(path, CHAT_TEMPLATE_KEY)
