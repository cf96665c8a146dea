"""Where a model comes from (a local folder or the Hugging Face hub, asked once), and what
kind it is (masked or causal, from ``config.json``)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import (
    constants,
    errors,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
    try_to_load_from_cache,
)

from .._conventions import MODEL_TYPES as MODEL_TYPE_CHOICES
from .._errors import BiasampError, HubUnreachableWarning
from .._files import sha256_file
from .._validation import OneOf, check
from . import LoadOptions

#: File names (suffixes) that hold weights; their sha256 goes into the provenance.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".gguf")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@contextlib.contextmanager
def failing_as(what: str):
    """Context: any error in it becomes one line, ``could not WHAT: Type: message``."""
    try:
        yield
    except Exception as exc:  # OSError, ValueError, HFValidationError, ...
        raise BiasampError(
            f"could not {what}: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        ) from exc


def check_model(model) -> str:
    """The folder (expanded) or hub name to load; a path that is no folder is an error."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str) or not model.strip():
        raise BiasampError(
            f"model must be a Hugging Face model name or a local folder; got {model!r}"
        )
    expanded = os.path.expanduser(model)
    if Path(expanded).is_dir():
        return expanded
    if Path(expanded).exists():
        raise BiasampError(f"model {model!r} is a file; give the model's folder")
    if (
        model.startswith(("/", ".", "~"))
        or "\\" in model
        or model.count("/") > 1
        or (len(model) > 1 and model[1] == ":")
    ):
        raise BiasampError(
            f"model {model!r}: no such folder (a hub name looks like 'name' or 'org/name')"
        )
    return model


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` is given (``local_files_only``: offline, or an unreachable hub)."""

    name: str
    local: bool
    revision: str | None = None
    hf_cache_dir: str | None = None
    local_files_only: bool = False
    commit: str | None = None

    def kwargs(self) -> dict:
        hub = {"revision": self.revision, "cache_dir": self.hf_cache_dir}
        return {} if self.local else {**hub, "local_files_only": self.local_files_only}

    def folder(self) -> Path | None:
        """The folder holding the files: the local folder, or the cached hub snapshot."""
        if self.local:
            return Path(self.name)
        cached = _cached_file(self.name, self.commit or self.revision, self.hf_cache_dir)
        return Path(cached).parent if cached else None


def _cached_file(name, revision, hf_cache_dir, filename="config.json"):
    try:
        path = try_to_load_from_cache(
            name, filename, cache_dir=hf_cache_dir, revision=revision or "main"
        )
    except Exception:  # noqa: BLE001 - a malformed name or cache: treat as not cached
        return None
    return path if isinstance(path, str) else None


def _classify(exc) -> tuple[str, str]:
    """``(kind, detail)`` of a failed hub request."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    detail = " ".join(str(exc).split())[:200]
    for cls, kind in (
        (errors.GatedRepoError, "gated"),  # a RepositoryNotFoundError too: first
        (errors.RepositoryNotFoundError, "not-found"),
        (errors.RevisionNotFoundError, "revision"),
        (errors.EntryNotFoundError, "no-config"),
    ):
        if isinstance(exc, cls):
            return kind, f"HTTP {status}"
    if isinstance(exc, errors.HfHubHTTPError) and status is not None:
        kind = {404: "not-found", 401: "gated", 403: "gated", 408: "unreachable"}.get(status)
        kind = kind or ("unreachable" if status >= 500 or status == 429 else "http")
        return kind, f"HTTP {status}" + (f": {detail}" if kind == "http" else "")
    return "unreachable", f"{type(exc).__name__}: {detail}"


@functools.lru_cache(maxsize=64)
def _resolve_hub(name, *, revision, hf_cache_dir, offline, endpoint):
    if not offline:
        try:
            meta = get_hf_file_metadata(hf_hub_url(name, "config.json", revision=revision))
            return ModelSource(name, False, revision, hf_cache_dir, False, meta.commit_hash)
        except Exception as exc:  # noqa: BLE001 - classified, re-raised as one line
            kind, detail = _classify(exc)
        if kind != "unreachable":
            at = f"revision {revision!r} of " if kind == "revision" else ""
            reason = {
                "not-found": "was not found on the Hugging Face hub",
                "gated": "is private or gated on the Hugging Face hub (log in with `hf auth "
                "login` and accept its terms on its page)",
                "revision": "was not found on the Hugging Face hub",
                "no-config": "has no config.json on the Hugging Face hub (not a transformers "
                "model)",
                "http": "could not be fetched from the Hugging Face hub",
            }[kind]
            raise BiasampError(
                f"{at}model {name!r} {reason} ({detail} at {endpoint}); check the name "
                "(hub names look like 'name' or 'org/name') or give a local folder"
            )
    # offline, or the hub unreachable: the cached copy
    cached = _cached_file(name, revision, hf_cache_dir)
    if cached is None:
        hint = (
            "give a local model folder, or download the model once where the hub is reachable "
            f"(into the same cache{f' ({hf_cache_dir})' if hf_cache_dir else ''}) and run with "
            "HF_HUB_OFFLINE=1"
        )
        raise BiasampError(
            f"model {name!r} is not in the Hugging Face cache and HF_HUB_OFFLINE=1 forbids "
            f"downloading it; {hint}"
            if offline
            else f"the Hugging Face hub is unreachable ({endpoint}: {detail}) and model "
            f"{name!r} is not in the local cache; {hint}"
        )
    commit = Path(cached).parent.name
    if not offline:
        warnings.warn(
            HubUnreachableWarning(
                f"the Hugging Face hub is unreachable ({endpoint}: {detail}); using the cached "
                f"copy of model {name!r} (commit {commit[:12]}); set HF_HUB_OFFLINE=1 to skip "
                "the check"
            ),
            stacklevel=2,
        )
    return ModelSource(name, False, revision, hf_cache_dir, True, commit)


def resolve_source(model, *, revision=None, hf_cache_dir=None) -> ModelSource:
    """The :class:`ModelSource` of ``model``; a hub name costs one HEAD request (no retries), so
    that an unreachable hub is one line, told apart from a name the hub does not have."""
    name = check_model(model)
    if Path(name).is_dir():
        return ModelSource(name, True)
    cache = None if hf_cache_dir is None else os.fspath(Path(hf_cache_dir).expanduser())
    return _resolve_hub(
        name,
        revision=revision,
        hf_cache_dir=cache,
        offline=bool(constants.HF_HUB_OFFLINE),
        endpoint=str(constants.ENDPOINT),
    )


def weight_files_sha256(source: ModelSource) -> dict:
    """``{file name: sha256}`` of the weight files in the model's folder or cached snapshot."""
    folder = source.folder()
    if folder is None or not folder.is_dir():
        return {}
    out = {}
    for f in sorted(folder.iterdir()):
        if not f.is_file() or not f.name.endswith((*WEIGHT_SUFFIXES, ".index.json")):
            continue
        blob = Path(os.path.realpath(f)).name  # a cached hub file: a link to its sha256's blob
        out[f.name] = blob if (not source.local and _SHA256.match(blob)) else sha256_file(f)
    return out


def read_json(path) -> dict | None:
    """A JSON object file as a dict; None when it cannot be read so (the loading code says why)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_config(source: ModelSource) -> dict | None:
    """The model's ``config.json`` without transformers (the hub's copy downloaded), or None."""
    if source.local:
        return read_json(Path(source.name) / "config.json")
    try:
        where = {**source.kwargs(), "revision": source.commit or source.revision}
        return read_json(hf_hub_download(source.name, "config.json", **where))
    except Exception:  # noqa: BLE001 - transformers' reading says why
        return None


def _kind_by_name(config: dict | None) -> tuple[str, str] | None:
    """``(kind, evidence)`` when the first of ``architectures`` names its head, else None."""
    archs = (config or {}).get("architectures")
    if not isinstance(archs, list) or not archs or not isinstance(first := archs[0], str):
        return None
    if first.endswith("ForMaskedLM"):
        return "masked", f"config.json architectures {archs}"
    if first.endswith(("ForCausalLM", "LMHeadModel")) and not first.endswith("WithLMHeadModel"):
        # (XLM's and Flaubert's *WithLMHeadModel: the tables say masked for one of them)
        return "causal", f"config.json architectures {archs}"
    return None


def _class_names(mapping) -> set:
    return {c for v in mapping.values() for c in (v if isinstance(v, (tuple, list)) else (v,))}


def detect_model_type(
    model, *, revision=None, hf_cache_dir=None, trust_remote_code=False, source=None
) -> tuple[str, str]:
    """``("masked" | "causal", evidence)`` from the model's ``config.json``, no weights loaded
    (the rule: docs/scoring.md); an error when it names neither kind."""
    src = source or resolve_source(model, revision=revision, hf_cache_dir=hf_cache_dir)
    if src.local and not (Path(src.name) / "config.json").is_file():
        raise BiasampError(
            f"model {str(model)!r}: no config.json in {src.name} (not a transformers model folder)"
        )
    told = _kind_by_name(read_config(src))
    if told is not None:  # the first architecture's name says it: no transformers needed
        return told
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    with failing_as(f"read the config of model {str(model)!r}"):
        config = AutoConfig.from_pretrained(
            src.name, trust_remote_code=trust_remote_code, **src.kwargs()
        )
    masked = _class_names(MODEL_FOR_MASKED_LM_MAPPING_NAMES)
    causal = _class_names(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    archs = list(getattr(config, "architectures", None) or [])
    for arch in archs:
        if arch.endswith("ForMaskedLM") or (arch in masked and arch not in causal):
            return "masked", f"config.json architectures {archs}"
        if arch.endswith(("ForCausalLM", "LMHeadModel")) or (arch in causal and arch not in masked):
            return "causal", f"config.json architectures {archs}"
    mtype = getattr(config, "model_type", None)
    in_masked = mtype in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    in_causal = mtype in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if in_masked and (not in_causal or not getattr(config, "is_decoder", False)):
        return "masked", f"config.json model_type {mtype!r}"
    if in_causal:
        return "causal", f"config.json model_type {mtype!r}"
    raise BiasampError(
        f"model {str(model)!r}: cannot tell from its config.json (model_type {mtype!r}, "
        f"architectures {archs}) whether it is a masked or a causal language model; give "
        "model_type 'masked' or 'causal' (--model-type)"
    )


@dataclass(frozen=True)
class ResolvedModel:
    """A model id or folder, resolved: its files, its kind and what said so (``evidence``)."""

    name: str
    source: ModelSource
    model_type: str
    evidence: str
    revision: str | None = None


def resolve_model(model, model_type="auto", *, options=None) -> ResolvedModel:
    """Resolve ``model`` once, no weights loaded: the id checked, the hub asked once, the kind
    read from ``config.json`` (``"auto"``) or checked against it (a BERT given ``"causal"`` is
    refused); ``options``: the :class:`~biasamp.scoring.LoadOptions` it reads."""
    if isinstance(model, ResolvedModel):
        return model
    options = options or LoadOptions()
    model_type = check(model_type, OneOf(MODEL_TYPE_CHOICES), "model_type")
    source = resolve_source(model, revision=options.revision, hf_cache_dir=options.hf_cache_dir)
    try:
        kind, evidence = detect_model_type(
            model, source=source, trust_remote_code=options.trust_remote_code
        )
    except BiasampError as exc:
        if model_type == "auto" or "cannot tell" not in str(exc):
            raise
        kind, evidence = model_type, "given"  # an unknown kind: the caller's word decides
    if model_type not in ("auto", kind):
        raise BiasampError(
            f"model_type {model_type!r} does not fit model {str(model)!r}: it is a {kind} "
            f"language model ({evidence}); use model_type {kind!r} or 'auto'"
        )
    return ResolvedModel(str(model), source, kind, evidence, options.revision)
