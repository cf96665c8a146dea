"""Loading masked LMs and tokenizers; device/dtype choice; the LM head applied at chosen rows."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from .._errors import BiasampError, MissingDependencyError

log = logging.getLogger(__name__)

__all__ = ["check_model", "load_model", "load_tokenizer", "resolve_device", "resolve_dtype",
           "lm_head_fn", "model_fingerprint", "tokenizer_fingerprint"]


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency
        raise MissingDependencyError("biasamp.scoring needs torch: pip install torch") from exc
    return torch


def check_model(model) -> str:
    """Return the folder (expanded) or hub name to load; error at once for a bad local path.

    The one model-id heuristic of biasamp (no torch needed): an existing folder is a local
    model; an existing file, or a string that can only be a path (starts with ``/``, ``.``,
    ``~``, holds a backslash or more than one ``/``), is an error; anything else is a hub name.
    """
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str) or not model.strip():
        raise BiasampError(f"model must be a Hugging Face model name or a local folder; got "
                           f"{model!r}")
    expanded = os.path.expanduser(model)
    if Path(expanded).is_dir():
        return expanded
    if Path(expanded).exists():
        raise BiasampError(f"model {model!r} is a file; give the model's folder")
    if (model.startswith(("/", ".", "~")) or "\\" in model or model.count("/") > 1
            or (len(model) > 1 and model[1] == ":")):
        raise BiasampError(f"model {model!r}: no such folder (a hub name looks like 'name' or "
                           "'org/name')")
    return model


def load_tokenizer(model, *, revision=None, trust_remote_code=False):
    """Load the tokenizer of ``model`` (hub name or folder); errors name the model."""
    name = check_model(model)
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(name, revision=revision,
                                             trust_remote_code=trust_remote_code)
    except Exception as exc:  # OSError, HFValidationError, ValueError, ...
        raise BiasampError(f"could not load the tokenizer of model {model!r}: "
                           f"{type(exc).__name__}: {exc}") from exc


def resolve_device(device):
    """'auto' -> 'cuda' if available else 'cpu'; validates other strings."""
    torch = _torch()
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise BiasampError(
            f"device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'; got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise BiasampError(f"device {device!r} requested but CUDA is not available; "
                           "use device='cpu' or 'auto'")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise BiasampError(f"device {device!r} requested but MPS is not available")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise BiasampError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    return dev


def resolve_dtype(dtype, device):
    """Map a dtype name to a torch dtype; float16 needs CUDA (bfloat16 is allowed on CPU)."""
    from . import canonical_dtype

    torch = _torch()
    name = canonical_dtype(dtype)
    if name == "float16" and device.type != "cuda":
        raise BiasampError(f"dtype 'float16' needs a CUDA device; got device '{device}' "
                           "(use float32, or bfloat16 on CPU)")
    return getattr(torch, name)


def load_model(model, *, revision=None, trust_remote_code=False, dtype=None, progress=False):
    """Load ``AutoModelForMaskedLM`` (eval mode); errors name the model.

    ``progress=False`` silences transformers' weight-loading bar for this call only.
    """
    name = check_model(model)
    from transformers import AutoModelForMaskedLM
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    if was_on and not progress:
        hf_logging.disable_progress_bar()
    try:
        mdl = AutoModelForMaskedLM.from_pretrained(name, revision=revision,
                                                   trust_remote_code=trust_remote_code,
                                                   dtype=dtype)
    except Exception as exc:
        raise BiasampError(
            f"could not load masked LM {model!r}: {type(exc).__name__}: {exc}") from exc
    finally:
        if was_on and not progress:
            hf_logging.enable_progress_bar()
    return mdl.eval()


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
            ("RobertaFor", "XLMRobertaFor", "CamembertFor", "RobertaPreLayerNormFor",
             "MPNetFor", "XLMRobertaXLFor")):
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


def _sha256_file(path, limit=None):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read() if limit is None else f.read(limit))
    return h.hexdigest()


def model_fingerprint(model_name, revision, hf_model):
    """Identify the weights: hub name + revision (+ resolved commit), or a folder's files."""
    info = {"model": str(model_name), "revision": revision,
            "commit": getattr(hf_model.config, "_commit_hash", None)}
    path = Path(os.path.expanduser(str(model_name)))
    if path.is_dir():
        info["model"] = str(path.resolve())
        files = {}
        for f in sorted(path.iterdir()):
            if f.is_file():
                st = f.stat()
                files[f.name] = (_sha256_file(f) if st.st_size < 1 << 20
                                 else f"{st.st_size}:{st.st_mtime_ns}")
        info["files"] = files
    return hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()


def tokenizer_fingerprint(tokenizer):
    """Hash of the tokenizer's full definition (fast tokenizers serialise to JSON)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = backend.to_str() if backend is not None else json.dumps(
        sorted(tokenizer.get_vocab().items()))
    return hashlib.sha256((type(tokenizer).__name__ + "\0" + text).encode()).hexdigest()
