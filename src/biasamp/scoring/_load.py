"""Loading language models and tokenizers; device/dtype choice; the LM head at chosen rows.

long on purpose: every step of loading a model (tokenizer, weights, device, dtype,
placement) in one place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path

from .._errors import BiasampError, MissingDependencyError
from .._files import sha256_file
from ._hub import resolve_source

log = logging.getLogger(__name__)

__all__ = [
    "TOKENIZER_FILES",
    "check_dtype",
    "check_vocabulary",
    "device_missing",
    "input_device",
    "load_model",
    "load_tokenizer",
    "resolve_device",
    "resolve_dtype",
    "lm_head_fn",
    "model_fingerprint",
    "tokenizer_fingerprint",
    "transformers_logs_propagate",
]


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency
        raise MissingDependencyError("biasamp.scoring needs torch: pip install torch") from exc
    return torch


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


def _source(model, revision=None):
    """A :class:`~biasamp.scoring._hub.ModelSource` from a source or a model name/folder."""
    if hasattr(model, "kwargs") and hasattr(model, "local"):
        return model
    return resolve_source(model, revision=revision)


@contextlib.contextmanager
def transformers_logs_propagate():
    """Context: what transformers logs (a tokenizer's "sequence longer than the maximum")
    goes to the root logger's handlers, as every other library's log, instead of to the
    stderr handler transformers keeps for itself; the command line then shows it in its one
    form (``warning (transformers): ...``). transformers' own setting comes back after."""
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


def _quiet_transformers():
    """Context: transformers' own warnings off (its load report; we report what matters)."""
    import contextlib

    from transformers.utils import logging as hf_logging

    @contextlib.contextmanager
    def quiet():
        before = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()
        try:
            yield
        finally:
            hf_logging.set_verbosity(before)

    return quiet()


def load_tokenizer(model, *, revision=None, trust_remote_code=False):
    """Load the tokenizer of ``model`` (hub name, folder or ModelSource); errors name the model.

    A local folder without any tokenizer file is refused at once ("no tokenizer files in DIR"),
    instead of transformers building an empty tokenizer that maps every word to ``[UNK]``.
    """
    src = _source(model, revision)
    if src.local and not any((Path(src.name) / f).is_file() for f in TOKENIZER_FILES):
        raise BiasampError(
            f"no tokenizer files in {src.name} (looked for {', '.join(TOKENIZER_FILES[:4])}, "
            "*.model, ...); save the model's tokenizer into the folder "
            "(tokenizer.save_pretrained(DIR))"
        )
    from transformers import AutoTokenizer

    try:
        with _quiet_transformers():
            return AutoTokenizer.from_pretrained(
                src.name, trust_remote_code=trust_remote_code, **src.kwargs()
            )
    except Exception as exc:  # OSError, HFValidationError, ValueError, ...
        raise BiasampError(
            f"could not load the tokenizer of model {src.name!r}: "
            f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        ) from exc


def resolve_device(device):
    """'auto' -> 'cuda' if available else 'cpu'; validates other strings."""
    torch = _torch()
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise BiasampError(
            f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'; got {device!r}"
        ) from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise device_missing(device)
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise device_missing(device)
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise BiasampError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    return dev


def resolve_dtype(dtype, device):
    """Map a dtype name to a torch dtype; float16 needs CUDA (bfloat16 is allowed on CPU);
    float64 (a slow reference run, exact to ~1e-12) is not available on MPS."""
    torch = _torch()
    return getattr(torch, check_dtype(dtype, device))


def device_missing(device) -> BiasampError:
    """The one message for a ``cuda``/``cuda:N``/``mps`` device the machine lacks (asked of
    torch here, or told before torch by :mod:`._preflight`)."""
    if str(device).startswith("mps"):
        return BiasampError(f"device {device!r} requested but MPS is not available")
    return BiasampError(
        f"device {device!r} requested but CUDA is not available; use device='cpu' or 'auto'"
    )


def check_dtype(dtype, device) -> str:
    """The canonical name of ``dtype`` if ``device`` (a ``torch.device`` or its name) takes it;
    needs no torch."""
    from . import canonical_dtype

    name = canonical_dtype(dtype)
    if name == "float16" and getattr(device, "type", device) != "cuda":
        raise BiasampError(
            f"dtype 'float16' needs a CUDA device; got device '{device}' "
            "(use float32, or bfloat16 on CPU)"
        )
    if name == "float64" and getattr(device, "type", device) == "mps":
        raise BiasampError("dtype 'float64' is not available on device 'mps' (use float32)")
    return name


_AUTO_CLASSES = {
    "masked": ("AutoModelForMaskedLM", "masked LM", "masked-LM head"),
    "causal": ("AutoModelForCausalLM", "causal LM", "language-model head"),
}


def _placement(device_map, max_memory, offload_folder) -> dict:
    """``from_pretrained`` keywords that let accelerate place the model (none without a map)."""
    if device_map is None:
        return {}
    try:
        import accelerate  # noqa: F401 - transformers needs it for a device map
    except ImportError as exc:
        raise MissingDependencyError(
            f"device_map {device_map!r} needs accelerate: pip install accelerate"
        ) from exc
    out = {"device_map": device_map}
    if max_memory is not None:
        out["max_memory"] = dict(max_memory)
    if offload_folder is not None:
        out["offload_folder"] = os.fspath(offload_folder)
    return out


def load_model(
    model,
    *,
    kind="masked",
    revision=None,
    trust_remote_code=False,
    dtype=None,
    allow_missing_weights=False,
    device_map=None,
    max_memory=None,
    offload_folder=None,
):
    """Load ``AutoModelForMaskedLM`` or ``AutoModelForCausalLM`` (eval mode); errors name the model.

    Weights that the checkpoint lacks (transformers initialises them at random, e.g. the
    masked-LM head of a sentence-transformers ``BertModel`` folder) are an error naming them,
    unless ``allow_missing_weights``; unexpected weights (a pooler, a next-sentence head) are
    only logged. transformers' weight-loading bar is off for this call (the caller's progress
    display is the one a run shows).
    ``device_map`` (``"auto"``, ...) lets accelerate place the layers over the GPUs, the CPU and
    ``offload_folder`` on disk, each device holding at most its ``max_memory``.

    Returns
    -------
    (model, missing) : the model, and the sorted names of the newly initialised weights
    """
    import transformers
    from transformers.utils import logging as hf_logging

    src = _source(model, revision)
    auto_name, what, head = _AUTO_CLASSES[kind]
    was_on = hf_logging.is_progress_bar_enabled()
    if was_on:
        hf_logging.disable_progress_bar()
    try:
        with _quiet_transformers():
            mdl, info = getattr(transformers, auto_name).from_pretrained(
                src.name,
                trust_remote_code=trust_remote_code,
                dtype=dtype,
                output_loading_info=True,
                **_placement(device_map, max_memory, offload_folder),
                **src.kwargs(),
            )
    except MissingDependencyError:
        raise
    except Exception as exc:
        raise BiasampError(
            f"could not load {what} {src.name!r}: {type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:300]}"
        ) from exc
    finally:
        if was_on:
            hf_logging.enable_progress_bar()
    missing = sorted(
        set(info.get("missing_keys") or ())
        | {
            k[0] if isinstance(k, (tuple, list)) else str(k)
            for k in info.get("mismatched_keys") or ()
        }
    )
    if info.get("unexpected_keys"):
        log.info(
            "model %s: unused weights in the checkpoint: %s",
            src.name,
            ", ".join(sorted(info["unexpected_keys"])),
        )
    if missing and not allow_missing_weights:
        shown = ", ".join(missing[:6]) + (
            f", ... ({len(missing)} in all)" if len(missing) > 6 else ""
        )
        raise BiasampError(
            f"model {src.name!r}: the checkpoint has no weights for {shown} of "
            f"{type(mdl).__name__}; transformers would initialise them at random and the scores "
            f"would mean nothing (a checkpoint without a trained {head}?); use a checkpoint "
            "with one, or allow_missing_weights (--allow-missing-weights) to probe it anyway"
        )
    return mdl.eval(), missing


def check_vocabulary(tokenizer, model, name) -> None:
    """Refuse a tokenizer that can emit ids the model has no embedding (or LM-head) row for:
    a tokenizer of another model, or tokens added without resizing the embeddings. Without
    this check the first such id ends the run in an ``IndexError`` deep inside torch."""
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
    """Where a model placed by a device map reads its inputs: the device of its first placed
    module (a GPU index, or the CPU when that module is on the CPU or on disk)."""
    torch = _torch()
    placed = getattr(model, "hf_device_map", None)
    if not placed:
        return fallback
    first = next(iter(placed.values()))
    if isinstance(first, int):
        return torch.device("cuda", first)
    return torch.device(first if first in ("cuda", "mps", "xpu") else "cpu")


def lm_head_fn(model):
    """Return ``(encoder, head)``: ``head(hidden (s, H)) -> logits (s, V)``, or None.

    With it, the LM head (a vocabulary-sized matmul) runs only at the positions being scored.
    None means an architecture this function does not know: the caller then runs the whole model
    and gathers the logits at those positions (same numbers, slower).
    """
    encoder = getattr(model, "base_model", None)
    if encoder is None or encoder is model:
        return None
    cls_name = type(model).__name__
    if hasattr(model, "cls") and cls_name.startswith(("BertFor", "RoFormerFor", "ConvBertFor")):
        return encoder, model.cls
    if hasattr(model, "lm_head") and cls_name.startswith(
        (
            "RobertaFor",
            "XLMRobertaFor",
            "CamembertFor",
            "RobertaPreLayerNormFor",
            "MPNetFor",
            "XLMRobertaXLFor",
        )
    ):
        return encoder, model.lm_head
    if hasattr(model, "predictions") and cls_name.startswith("AlbertFor"):
        return encoder, model.predictions
    if cls_name.startswith("DistilBertFor"):

        def head(h):
            h = model.vocab_transform(h)
            h = model.activation(h)
            h = model.vocab_layer_norm(h)
            return model.vocab_projector(h)

        return encoder, head
    return None


def model_fingerprint(model_name, revision, commit=None):
    """Identify the weights: hub name + revision + resolved commit, or a folder's files."""
    info = {"model": str(model_name), "revision": revision, "commit": commit}
    path = Path(os.path.expanduser(str(model_name)))
    if path.is_dir():
        info["model"] = str(path.resolve())
        files = {}
        for f in sorted(path.iterdir()):
            if f.is_file():
                st = f.stat()
                files[f.name] = (
                    sha256_file(f) if st.st_size < 1 << 20 else f"{st.st_size}:{st.st_mtime_ns}"
                )
        info["files"] = files
    return hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()


def tokenizer_fingerprint(tokenizer):
    """Hash of the tokenizer's full definition (fast tokenizers serialise to JSON)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = (
        backend.to_str()
        if backend is not None
        else json.dumps(sorted(tokenizer.get_vocab().items()))
    )
    return hashlib.sha256((type(tokenizer).__name__ + "\0" + text).encode()).hexdigest()
