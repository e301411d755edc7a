"""Which local model ``--llm local`` takes: the installed one (nothing is downloaded),
and an error that names the models there are and how to install one."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest


def test_local_picks_the_installed_model_and_says_which_are_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autofeedback.loop._local_models import LOCAL_MODELS, _pick_local, installed_local_models

    # a machine without the chunk packages, whatever this one has installed
    chunks = {d.replace("-", "_") for m in LOCAL_MODELS.values() for d in m.distributions}
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name in chunks else find_spec(name, *rest),
    )
    cache, hub = tmp_path / "models", tmp_path / "hub"
    cache.mkdir()
    hub.mkdir()
    assert installed_local_models(cache_dir=cache, hf_cache_dir=hub) == {}
    with pytest.raises(Exception, match="no local model is installed") as info:
        _pick_local(cache, hub)
    assert "local:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF" in str(info.value)
    assert "Offline: pip install 'autofeedback-api[local-1-5b]'" in str(info.value)
    # the 1.5B in the cache, vouched for by its stamp (a sparse file: no disk, no hashing)
    big = LOCAL_MODELS["1.5b"]
    path = cache / big.filename
    with path.open("wb") as f:
        f.truncate(big.size)
    st = path.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": big.sha256}
    (cache / (big.filename + ".sha256-ok")).write_text(json.dumps(stamp))
    assert installed_local_models(cache_dir=cache, hf_cache_dir=hub) == {
        "1.5b": "autofeedback cache"
    }
    assert _pick_local(cache, hub) == "1.5b"


def test_a_missing_local_model_names_the_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autofeedback import ConfigurationError
    from autofeedback.loop._local_models import LOCAL_MODELS, ensure_local_model

    big = LOCAL_MODELS["1.5b"]
    # no model's weight packages importable, whatever this environment installed (CI
    # installs the 0.5B one): the 1.5B model is only in the cache
    for model in LOCAL_MODELS.values():
        for dist in model.distributions:
            monkeypatch.setitem(sys.modules, dist.replace("-", "_"), None)
    monkeypatch.setenv("AUTOFEEDBACK_CACHE_DIR", str(tmp_path))
    cache = tmp_path / "models"
    cache.mkdir()
    path = cache / big.filename
    with path.open("wb") as f:
        f.truncate(big.size)  # sparse: no disk, and its stamp spares the hashing
    st = path.stat()
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": big.sha256}
    (cache / (big.filename + ".sha256-ok")).write_text(json.dumps(stamp))
    with pytest.raises(ConfigurationError, match=r"installed: 1\.5b \(autofeedback cache\)"):
        ensure_local_model("0.5b")
