"""Reading a GGUF file's chat template without loading the model."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from vamos_env.llm.gguf import GGUFError, chat_template


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_file(path: Path, entries: list[tuple[str, int, bytes]], version: int = 3) -> Path:
    """A GGUF header with ``entries`` (key, value type, encoded value) and no tensors."""
    body = b"GGUF" + struct.pack("<IQQ", version, 0, len(entries))
    for key, kind, value in entries:
        body += _string(key) + struct.pack("<I", kind) + value
    path.write_bytes(body + b"\0" * 64)
    return path


def test_the_template_after_scalars_strings_and_arrays(tmp_path: Path) -> None:
    tokens = struct.pack("<IQ", 8, 3) + _string("a") + _string("bb") + _string("<|im_end|>")
    scores = struct.pack("<IQ", 6, 3) + struct.pack("<3f", 0.0, 1.0, 2.0)
    path = gguf_file(
        tmp_path / "m.gguf",
        [
            ("general.architecture", 8, _string("qwen2")),
            ("qwen2.context_length", 4, struct.pack("<I", 32768)),
            ("general.flag", 7, b"\x01"),
            ("general.size", 10, struct.pack("<Q", 5)),
            ("tokenizer.ggml.tokens", 9, tokens),
            ("tokenizer.ggml.scores", 9, scores),
            ("tokenizer.chat_template", 8, _string("{{- messages }}")),
        ],
    )
    assert chat_template(path) == "{{- messages }}"


def test_no_template_is_none(tmp_path: Path) -> None:
    path = gguf_file(tmp_path / "m.gguf", [("general.name", 8, _string("x"))])
    assert chat_template(path) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"GGML\x03\0\0\0", "magic"), (b"GGUF" + struct.pack("<I", 1), "version 2 or 3")],
)
def test_not_a_gguf_file(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content + b"\0" * 32)
    with pytest.raises(GGUFError, match=message):
        chat_template(path)


def test_a_truncated_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "cut.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + struct.pack("<Q", 100) + b"abc")
    with pytest.raises(GGUFError, match="more bytes"):
        chat_template(path)
