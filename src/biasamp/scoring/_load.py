"""Loading language models and tokenizers; device/dtype choice; the LM head at chosen rows."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path

from .._errors import BiasampError, MissingDependencyError, option
from .._validation import OneOf, Optional, check
from . import DEVICE_MAPS, check_device, check_dtype, parse_max_memory
from ._hub import ModelSource, failing_as, resolve_source

log = logging.getLogger(__name__)

#: Files of which at least one is in a folder that holds a tokenizer.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "tokenizer.model",
    "sentencepiece.bpe.model",
    "spm.model",
    "vocab.model",
    "special_tokens_map.json",
)


@contextlib.contextmanager
def transformers_logs_propagate():
    """Context: transformers' logs go to the root logger's handlers, not its own stderr one."""
    from transformers.utils import logging as hf_logging

    lib = logging.getLogger("transformers")
    handlers, propagate = list(lib.handlers), lib.propagate
    hf_logging.disable_default_handler()
    hf_logging.enable_propagation()
    try:
        yield
    finally:
        for h in handlers:
            if h not in lib.handlers:
                lib.addHandler(h)
        lib.propagate = propagate


@contextlib.contextmanager
def _quiet_transformers():
    """Context: transformers' own warnings (its load report) and progress bars off."""
    from transformers.utils import logging as hf_logging

    before, bar = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(before)
        if bar:
            hf_logging.enable_progress_bar()


def load_tokenizer(model, *, revision=None, trust_remote_code=False):
    """The tokenizer of ``model`` (hub name, folder or ModelSource); errors name the model."""
    src = model if isinstance(model, ModelSource) else resolve_source(model, revision=revision)
    # a folder without one: transformers would build an empty tokenizer (every word [UNK])
    if src.local and not any((Path(src.name) / f).is_file() for f in TOKENIZER_FILES):
        raise BiasampError(
            f"no tokenizer files in {src.name} (looked for {', '.join(TOKENIZER_FILES[:4])}, "
            "*.model, ...); save the model's tokenizer into the folder "
            "(tokenizer.save_pretrained(DIR))"
        )
    from transformers import AutoTokenizer

    with failing_as(f"load the tokenizer of model {src.name!r}"), _quiet_transformers():
        return AutoTokenizer.from_pretrained(
            src.name, trust_remote_code=trust_remote_code, **src.kwargs()
        )


def resolve_device(device):
    """The torch device: ``"auto"`` is CUDA when there, else the CPU."""
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(check_device(device))
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise device_missing(device)
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise device_missing(device)
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise BiasampError(
            f"{option('device')} {device!r}: only {torch.cuda.device_count()} CUDA device(s)"
        )
    return dev


def resolve_dtype(dtype, device):
    """The torch dtype of a dtype name, checked against the device (:func:`check_dtype`)."""
    import torch

    return getattr(torch, check_dtype(dtype, device))


def device_missing(device) -> BiasampError:
    """The one message for a ``cuda``/``cuda:N``/``mps`` device the machine lacks."""
    if str(device).startswith("mps"):
        return BiasampError(f"{option('device')} {device!r} requested but MPS is not available")
    return BiasampError(
        f"{option('device')} {device!r} requested but CUDA is not available; use "
        f"{option('device', 'cpu')} or {option('device', 'auto')}"
    )


_AUTO_CLASSES = {
    "masked": ("AutoModelForMaskedLM", "masked LM", "masked-LM head"),
    "causal": ("AutoModelForCausalLM", "causal LM", "language-model head"),
}


def placement(options) -> dict:
    """The ``from_pretrained`` keywords with which accelerate places the model, checked."""
    device_map = check(options.device_map, Optional(OneOf(DEVICE_MAPS)), "device_map")
    for name in ("max_memory", "offload_folder"):
        if (value := getattr(options, name)) is not None and device_map is None:
            raise BiasampError(
                f"{name} places a model with device_map; give device_map='auto' "
                f"(--device-map auto) too (got {name}={value!r})"
            )
    if device_map is None:
        return {}
    try:
        import accelerate  # noqa: F401 - transformers needs it for a device map
    except ImportError as exc:
        raise MissingDependencyError(
            f"device_map {device_map!r} needs accelerate: pip install accelerate"
        ) from exc
    out = {"device_map": device_map}
    if options.max_memory is not None:
        out["max_memory"] = parse_max_memory(options.max_memory)
    if options.offload_folder is not None:
        out["offload_folder"] = os.fspath(options.offload_folder)
    return out


def load_model(source, *, kind, options, dtype, placed):
    """The model in eval mode and the weights its checkpoint lacks (transformers would initialise
    them at random: an error unless ``options.allow_missing_weights``)."""
    import transformers

    auto_name, what, head = _AUTO_CLASSES[kind]
    with failing_as(f"load {what} {source.name!r}"), _quiet_transformers():
        mdl, info = getattr(transformers, auto_name).from_pretrained(
            source.name,
            trust_remote_code=options.trust_remote_code,
            dtype=dtype,
            output_loading_info=True,
            **placed,
            **source.kwargs(),
        )
    mismatched = info.get("mismatched_keys") or ()
    mismatched = {k[0] if isinstance(k, (tuple, list)) else str(k) for k in mismatched}
    missing = sorted(set(info.get("missing_keys") or ()) | mismatched)
    if info.get("unexpected_keys"):
        log.info(
            "model %s: unused weights in the checkpoint: %s",
            source.name,
            ", ".join(sorted(info["unexpected_keys"])),
        )
    if missing and not options.allow_missing_weights:
        shown = ", ".join(missing[:6]) + (
            f", ... ({len(missing)} in all)" if len(missing) > 6 else ""
        )
        raise BiasampError(
            f"model {source.name!r}: the checkpoint has no weights for {shown} of "
            f"{type(mdl).__name__}; transformers would initialise them at random and the scores "
            f"would mean nothing (a checkpoint without a trained {head}?); use a checkpoint "
            "with one, or allow_missing_weights (--allow-missing-weights) to probe it anyway"
        )
    return mdl.eval(), missing


def check_vocabulary(tokenizer, model, name) -> None:
    """Refuse a tokenizer that can emit ids the model has no embedding (or LM-head) row for (a
    tokenizer of another model; tokens added without resizing), before torch's ``IndexError``."""
    rows = [
        int(m.weight.shape[0])
        for m in (model.get_input_embeddings(), model.get_output_embeddings())
        if m is not None and getattr(m, "weight", None) is not None
    ]
    vocab = tokenizer.get_vocab()
    if not rows or not vocab:
        return
    token, top = max(vocab.items(), key=lambda kv: kv[1])
    if top >= min(rows):
        n_over = sum(i >= min(rows) for i in vocab.values())
        raise BiasampError(
            f"model {name!r}: its tokenizer has ids up to {top} ({token!r}; {n_over} of its "
            f"{len(vocab)} tokens are beyond the model's {min(rows)} embedding rows): the "
            "tokenizer does not belong to this model, or tokens were added without resizing "
            "its embeddings"
        )


def input_device(model, fallback):
    """Where a model placed by a device map reads its inputs: its first module's device."""
    import torch

    placed = getattr(model, "hf_device_map", None)
    if not placed:
        return fallback
    first = next(iter(placed.values()))
    if isinstance(first, int):
        return torch.device("cuda", first)
    return torch.device(first if first in ("cuda", "mps", "xpu") else "cpu")


#: The masked-LM head's attribute, by the class names that have it there.
_HEADS = {
    "cls": ("BertFor", "RoFormerFor", "ConvBertFor"),
    "lm_head": (
        "RobertaFor",
        "XLMRobertaFor",
        "CamembertFor",
        "RobertaPreLayerNormFor",
        "MPNetFor",
        "XLMRobertaXLFor",
    ),
    "predictions": ("AlbertFor",),
}


def lm_head_fn(model):
    """``(encoder, head)``, so that the LM head runs only at the scored positions; None for an
    architecture it does not know (the whole model's logits: same numbers, slower)."""
    encoder = getattr(model, "base_model", None)
    if encoder is None or encoder is model:
        return None
    cls_name = type(model).__name__
    for attr, prefixes in _HEADS.items():
        if hasattr(model, attr) and cls_name.startswith(prefixes):
            return encoder, getattr(model, attr)
    if cls_name.startswith("DistilBertFor"):

        def head(h):
            return model.vocab_projector(
                model.vocab_layer_norm(model.activation(model.vocab_transform(h)))
            )

        return encoder, head
    return None


def tokenizer_fingerprint(tokenizer):
    """Hash of the tokenizer's full definition (fast tokenizers serialise to JSON)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = (
        backend.to_str()
        if backend is not None
        else json.dumps(sorted(tokenizer.get_vocab().items()))
    )
    return hashlib.sha256((type(tokenizer).__name__ + "\0" + text).encode()).hexdigest()
