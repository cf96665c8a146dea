"""The early checks of a command that loads models (``probe``, ``score``, ``pairs``): every
mistake that can be decided without the weights, before torch is imported."""

from __future__ import annotations

import importlib.metadata
import json
import sys

from tokenizers import Tokenizer

from .._errors import BiasampError, option
from . import LoadOptions, _load, canonical_dtype, check_dtype, check_estimator
from ._hub import ResolvedModel, read_json, resolve_model


def _tokenizer_json(resolved: ResolvedModel):
    """``(path, Tokenizer)`` of the model's ``tokenizer.json`` (no transformers), or None."""
    folder = resolved.source.folder()
    if folder is None or not (path := folder / "tokenizer.json").is_file():
        return None
    try:
        return path, Tokenizer.from_file(str(path))
    except Exception:  # noqa: BLE001 - transformers' loading says why
        return None


def _vocabulary_knows(resolved: ResolvedModel, token: str) -> tuple[bool | None, list]:
    """``(known, special tokens)`` of ``token`` in ``tokenizer.json`` (None: cannot tell)."""
    if (found := _tokenizer_json(resolved)) is None:
        return None, []
    path, tok = found
    special = [t.content for _, t in sorted(tok.get_added_tokens_decoder().items()) if t.special]
    if tok.token_to_id(token) is not None:
        return True, special
    # transformers adds the tokens its other files declare; one named there may exist after all
    for name in ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"):
        extra = path.parent / name
        if extra.is_file() and json.dumps(token) in extra.read_text(encoding="utf-8"):
            return None, special
    return False, special


def normalizer(resolved: ResolvedModel):
    """``text -> text`` as ``tokenizer.json`` normalises it (an uncased model lowercases), or None."""
    if (found := _tokenizer_json(resolved)) is None:
        return None
    norm = found[1].normalizer
    return None if norm is None else norm.normalize_str


def _may_run_code(resolved: ResolvedModel) -> bool:
    """Whether an ``auto_map`` (its own code) may be in the model's config files."""
    folder = resolved.source.folder()
    if folder is None:
        return True
    for path in (folder / "config.json", folder / "tokenizer_config.json"):
        if resolved.source.local and not path.is_file():
            continue  # a local folder without the file: no code named there
        if (data := read_json(path)) is None or "auto_map" in data:
            return True
    return False


def _check_context_token(resolved: ResolvedModel, token: str) -> None:
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
    """Whether torch cannot run CUDA here, told without torch (macOS, a ``+cpu`` build)."""
    if sys.platform == "darwin":
        return True
    try:
        return importlib.metadata.version("torch").partition("+")[2] == "cpu"
    except importlib.metadata.PackageNotFoundError:
        return False  # the loading code says torch is missing


def _check_device(options: LoadOptions) -> None:
    """Is the device there, and does it take the dtype? torch is asked only when it matters."""
    device, dtype = options.device, canonical_dtype(options.dtype)
    if device == "cpu" or (device == "auto" and dtype != "float16"):
        return
    if device == "mps" and sys.platform != "darwin":
        raise _load.device_missing(device)
    if device != "mps" and _no_cuda_build():
        if device != "auto":
            raise _load.device_missing(device)
        check_dtype(dtype, "cpu")  # auto is the CPU here, and float16 needs CUDA
    _load.resolve_dtype(dtype, _load.resolve_device(device))  # the one question torch answers


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
    """``{model: (ResolvedModel, estimator)}``: each model resolved once and checked before any
    weights load, the device last (docs/scoring.md); ``estimator`` is None without
    ``check_scoring``; ``masked_only``: why only masked LMs are taken (a compat mode)."""
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
        if context_token is not None:
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
