"""The early-check pass of a command that loads models: every mistake that can be decided
without the weights is decided here, before torch is imported.

:func:`preflight` runs once per command (``probe``, ``score``, ``pairs``), after the options
were checked (:class:`~biasamp.pipeline.ProbeConfig`) and before any model loads. In order:

1. each model resolved once (:func:`~biasamp.scoring.resolve_model`: the id, the hub asked
   once, the kind read from ``config.json`` as JSON), a ``revision`` given to a local folder
   refused (and an ``hf_cache_dir`` when every model is one, a ``trust_remote_code`` when no
   model names code of its own: either would do nothing), the estimator checked against the
   kind, a ``context_token`` checked against the kind and against the vocabulary of
   ``tokenizer.json`` (read with ``tokenizers``, no transformers);
2. last, whether the device asked for (``cuda``, ``cuda:N``, ``mps``, or ``auto`` with a
   dtype that needs CUDA) is there: refused before torch where the platform (``mps`` is
   macOS only) or the torch build (a CPU-only one, ``+cpu``) decides; else the one question
   only torch answers, and torch is imported only when that question is asked.

What cannot be decided from the files (a config.json whose architecture names no head, a
tokenizer without ``tokenizer.json``) is left to the loading code, which checks it as before.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys

from .._errors import BiasampError, option
from . import LoadOptions, canonical_dtype, check_estimator
from ._hub import ResolvedModel, resolve_model

__all__ = ["normalizer", "preflight"]


def _tokenizer_json(resolved: ResolvedModel):
    """``(path, Tokenizer)`` of the model's ``tokenizer.json`` read with ``tokenizers`` (no
    transformers); None when it has none or it cannot be read (the loading code says why)."""
    folder = resolved.source.folder()
    path = folder / "tokenizer.json" if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        from tokenizers import Tokenizer

        return path, Tokenizer.from_file(str(path))
    except Exception:  # noqa: BLE001 - transformers' loading says why
        return None


def _vocabulary_knows(resolved: ResolvedModel, token: str) -> tuple[bool | None, list]:
    """``(known, special tokens)``: whether ``token`` is one token of the model's vocabulary,
    read from ``tokenizer.json`` (None: cannot tell without transformers), and the special
    tokens it lists (for the message)."""
    if (found := _tokenizer_json(resolved)) is None:
        return None, []
    path, tok = found
    folder = path.parent
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None, []
    special = [t.get("content") for t in data.get("added_tokens") or () if t.get("special")]
    if tok.token_to_id(token) is not None:
        return True, special
    # transformers adds the tokens its other files declare; one named there may exist after all
    for name in ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"):
        extra = folder / name
        if extra.is_file() and json.dumps(token) in extra.read_text(encoding="utf-8"):
            return None, special
    return False, special


def normalizer(resolved: ResolvedModel):
    """``text -> text`` as the model's tokenizer normalises it before splitting (an uncased
    model lowercases), from ``tokenizer.json``; None when it has none or cannot be read."""
    if (found := _tokenizer_json(resolved)) is None:
        return None
    norm = found[1].normalizer
    return None if norm is None else norm.normalize_str


def _may_run_code(resolved: ResolvedModel) -> bool:
    """Whether the model may bring its own code (an ``auto_map`` in ``config.json`` or
    ``tokenizer_config.json``, the only place transformers looks for it); True when that
    cannot be told from the files at hand (a hub model's file not yet in the cache)."""
    folder = resolved.source.folder()
    if folder is None:
        return True
    for name in ("config.json", "tokenizer_config.json"):
        path = folder / name
        if not path.is_file():
            if resolved.source.local:
                continue  # a local folder without the file: no code named there
            return True
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return True  # the loading code says why
        if not isinstance(data, dict) or "auto_map" in data:
            return True
    return False


def _check_context_token(resolved: ResolvedModel, token: str | None) -> None:
    if token is None:
        return
    if resolved.model_type != "causal":
        raise BiasampError(
            f"context_token is for causal language models; model {resolved.name!r} is a "
            f"{resolved.model_type} language model ({resolved.evidence})"
        )
    known, special = _vocabulary_knows(resolved, token)
    if known is False:
        raise BiasampError(
            f"context_token {token!r} is not a token of the vocabulary of model "
            f"{resolved.name!r} (its special tokens: {', '.join(special) or 'none'})"
        )


def _no_cuda_build() -> bool:
    """Whether this installation cannot run CUDA, told without importing torch: macOS (torch
    has no CUDA build there) or a torch whose local version label says CPU only
    (``2.13.0+cpu``). False: only torch can tell."""
    if sys.platform == "darwin":
        return True
    try:
        return importlib.metadata.version("torch").partition("+")[2] == "cpu"
    except importlib.metadata.PackageNotFoundError:
        return False  # the loading code says torch is missing


def _check_device(options: LoadOptions) -> None:
    """Is the device there (and does it take the dtype)? Told before torch where the platform
    (``mps`` is macOS only) or the torch build (a CPU-only one) decides; else the one torch
    question, asked only when the answer matters. The messages are the loading code's."""
    device, dtype = options.device, canonical_dtype(options.dtype)
    if device == "cpu" or (device == "auto" and dtype != "float16"):
        return
    from ._load import check_dtype, device_missing, resolve_device, resolve_dtype

    if device == "mps" and sys.platform != "darwin":
        raise device_missing(device)
    if device != "mps" and _no_cuda_build():
        if device != "auto":
            raise device_missing(device)
        check_dtype(dtype, "cpu")  # auto is the CPU here, and float16 needs CUDA
    resolve_dtype(dtype, resolve_device(device))


def preflight(
    models,
    options: LoadOptions,
    *,
    model_type: str = "auto",
    scoring: str | None = None,
    context_token: str | None = None,
    check_scoring: bool = True,
    masked_only: str | None = None,
) -> dict:
    """``{model: (ResolvedModel, estimator)}``: each model resolved and checked before any
    weights load (see the module docstring); ``estimator`` is None when ``check_scoring`` is
    off (a command without estimators). ``masked_only``: why only masked LMs are taken (a
    compat mode), said when a model is of the other kind.

    Raises
    ------
    BiasampError
        One line: a bad model id or folder, a hub error, a ``model_type`` the config
        contradicts, a ``revision`` for a local folder, an ``hf_cache_dir`` when every model
        is a local folder, ``trust_remote_code`` when no model names code, an estimator of the other kind, a ``context_token`` for a masked
        LM or not in the vocabulary, a device the machine lacks.
    """
    out = {}
    for model in models:
        resolved = resolve_model(model, model_type, options=options)
        if options.revision is not None and resolved.source.local:
            raise BiasampError(
                f"{option('revision')} {options.revision!r} picks a version of a model on the "
                f"Hugging Face hub; model {str(model)!r} is a local folder, whose files are used "
                f"as they are (check out the version you want there, and leave out "
                f"{option('revision')})"
            )
        if masked_only and resolved.model_type != "masked":
            raise BiasampError(
                f"{masked_only}; model {str(model)!r} is a {resolved.model_type} language model "
                f"({resolved.evidence})"
            )
        estimator = (
            check_estimator(scoring, resolved.model_type, model=model) if check_scoring else None
        )
        _check_context_token(resolved, context_token)
        out[model] = (resolved, estimator)
    if options.hf_cache_dir is not None and all(r.source.local for r, _ in out.values()):
        raise BiasampError(  # an option with nothing to act on, as revision above
            f"{option('hf_cache_dir')} {str(options.hf_cache_dir)!r} is where models from the "
            f"Hugging Face hub are downloaded; every model given ({', '.join(map(str, out))}) "
            f"is a local folder, read where it is (leave out {option('hf_cache_dir')})"
        )
    if options.trust_remote_code and not any(_may_run_code(r) for r, _ in out.values()):
        raise BiasampError(  # an option with nothing to act on
            f"{option('trust_remote_code')} lets a model run its own code; no model given "
            f"({', '.join(map(str, out))}) has any (no auto_map in its config.json or "
            "tokenizer_config.json), so it would do nothing (leave out "
            f"{option('trust_remote_code', True)})"
        )
    _check_device(options)
    return out
