"""Language-model scoring: probabilities of candidate fillers for a blank in a prompt.

The only part of biasamp that imports torch and transformers, and only when a scorer is built;
the estimators of each model type are described in docs/scoring.md.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

from .._errors import BiasampError, UnknownNameError, option
from .._registry import Registry
from .._validation import OneOf, check

#: Model type -> its scorer class (imported when a scorer of that type is built).
SCORERS = Registry("model type")
SCORERS.register_lazy("masked", "biasamp.scoring._scorer:MaskedLMScorer")
SCORERS.register_lazy("causal", "biasamp.scoring._causal:CausalLMScorer")
#: Kinds of language model a scorer exists for (``model_type="auto"`` detects it).
MODEL_TYPES = tuple(SCORERS.names())
#: Every estimator (``scoring=``), mapped to the model type it is for.
ESTIMATORS = Registry("scoring mode")
for _name, _kind, _what in (
    ("word", "masked", "all word pieces, chain rule left to right"),
    ("first-piece", "masked", "FitBERT: the first piece at a single mask (compat)"),
    ("pll", "masked", "pseudo-log-likelihood of the filled sentence"),
    ("continuation", "causal", "log P(candidate and the rest of the sentence | text before it)"),
    ("sentence", "causal", "log P(the whole filled sentence), after the document start"),
):
    ESTIMATORS.register(_name, _kind, description=_what)
#: Names of the estimators, in order (masked first, then causal).
SCORING_MODES = tuple(ESTIMATORS.names())
#: The estimator used when ``scoring`` is not given, per model type.
DEFAULT_ESTIMATORS = {"masked": "word", "causal": "continuation"}


def estimators_for(model_type: str) -> tuple:
    """The estimators valid for ``model_type`` (``"masked"`` or ``"causal"``), default first.

    >>> estimators_for("masked")
    ('word', 'first-piece', 'pll')
    """
    model_type = check(model_type, OneOf(MODEL_TYPES), "model_type")
    return tuple(n for n in SCORING_MODES if ESTIMATORS.get(n) == model_type)


def check_estimator(scoring, model_type: str, *, model=None) -> str:
    """``scoring`` checked against ``model_type``; ``None`` gives the type's default.

    >>> check_estimator(None, "causal")
    'continuation'
    >>> check_estimator("word", "causal", model="gpt2")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: scoring 'word' is an estimator for masked language models, but model 'gpt2' is a causal language model; valid: 'continuation', 'sentence'
    """
    valid = estimators_for(model_type)
    if scoring is None:
        return DEFAULT_ESTIMATORS[model_type]
    if isinstance(scoring, str) and scoring in ESTIMATORS and scoring not in valid:
        what = (
            f"model {str(model)!r} is a {model_type} language model"
            if model is not None
            else f"model_type is {model_type!r}"
        )
        raise BiasampError(
            f"scoring {scoring!r} is an estimator for {ESTIMATORS.get(scoring)} language models, "
            f"but {what}; valid: {', '.join(repr(v) for v in valid)}"
        )
    try:
        return check(scoring, OneOf(valid), "scoring")
    except BiasampError as exc:  # an unknown name, as for every registry
        raise UnknownNameError(str(exc)) from None


#: Weight dtypes a scorer accepts, and accepted short spellings.
DTYPES = ("float32", "bfloat16", "float16", "float64")
DTYPE_ALIASES = {
    "fp32": "float32",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "fp64": "float64",
    "double": "float64",
}


def canonical_dtype(dtype, param: str = "dtype") -> str:
    """The dtype's name in :data:`DTYPES` (``None`` -> float32; aliases such as ``bf16``).

    >>> canonical_dtype("bf16")
    'bfloat16'
    """
    if dtype is None:
        return "float32"
    text = str(dtype).replace("torch.", "") if not isinstance(dtype, str) else dtype
    return check(DTYPE_ALIASES.get(text, text), OneOf(DTYPES), param)


def check_dtype(dtype, device) -> str:
    """The canonical name of ``dtype`` if ``device`` (a ``torch.device`` or its name) takes it."""
    name = canonical_dtype(dtype)
    if name == "float16" and getattr(device, "type", device) != "cuda":
        raise BiasampError(
            f"{option('dtype')} 'float16' needs a CUDA device; got {option('device')} "
            f"'{device}' (use {option('dtype', 'float32')}, or {option('dtype', 'bfloat16')} "
            "on CPU)"
        )
    if name == "float64" and getattr(device, "type", device) == "mps":
        raise BiasampError(
            f"{option('dtype')} 'float64' is not available on {option('device')} 'mps' (use "
            f"{option('dtype', 'float32')})"
        )
    return name


_DEVICE = re.compile(r"auto|cpu|mps|cuda(:[0-9]+)?")


def check_device(device, param: str = "device") -> str:
    """``device`` checked by its name alone (:func:`preflight` asks torch whether it is there)."""
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise BiasampError(
            f"{param} must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'; got {device!r}"
        )
    return device


#: Accepted values of ``device_map`` (accelerate's placement strategies).
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")


def parse_max_memory(text, param: str = "max_memory") -> dict:
    """``"0=10GiB,cpu=30GiB"`` (or a mapping) -> ``{0: "10GiB", "cpu": "30GiB"}``: the most
    each device may hold when ``device_map`` places a model (GPU indices as ints).

    >>> parse_max_memory("0=10GiB, cpu=200MB")
    {0: '10GiB', 'cpu': '200MB'}
    """
    items = (
        list(text.items())
        if isinstance(text, dict)
        else [part.partition("=")[::2] for part in str(text).split(",") if part.strip()]
    )
    out: dict = {}
    for key, value in items:
        key, value = str(key).strip(), str(value).strip()
        if not key or not value or not (key.isdigit() or key in ("cpu", "mps", "disk")):
            raise BiasampError(
                f"{param} must look like '0=10GiB,cpu=30GiB' (device=size: GPU "
                f"index, cpu or mps); got {text!r}"
            )
        out[int(key) if key.isdigit() else key] = value
    if not out:
        raise BiasampError(f"{param} must name at least one device=size; got {text!r}")
    return out


@dataclasses.dataclass(frozen=True)
class LoadOptions:
    """How a model is loaded and run, from the caller to :func:`load_scorer` and the scorers;
    each field is the :class:`~biasamp.ProbeConfig` option of the same name.

    >>> o = LoadOptions.of(type("Args", (), {"device": "cpu", "batch_size": 8})())
    >>> o.device, o.batch_size, o.dtype
    ('cpu', 8, 'float32')
    """

    revision: str | None = None
    device: str = "auto"
    dtype: str = "float32"
    trust_remote_code: bool = False
    batch_size: int = 32
    score_cache: str | os.PathLike | None = None
    hf_cache_dir: str | os.PathLike | None = None
    allow_missing_weights: bool = False
    device_map: str | None = None
    max_memory: Any = None
    offload_folder: str | os.PathLike | None = None

    @classmethod
    def of(cls, source) -> LoadOptions:
        """The options ``source`` (a :class:`ProbeConfig`, parsed arguments) holds by name."""
        names = [f.name for f in dataclasses.fields(cls) if hasattr(source, f.name)]
        return cls(**{name: getattr(source, name) for name in names})


def load_scorer(model, options: LoadOptions | None = None, *, model_type="auto", **kwargs):
    """A :class:`MaskedLMScorer` or :class:`CausalLMScorer` for ``model``.

    Parameters
    ----------
    model : str, path-like or ResolvedModel
        A hub name or folder, or a model :func:`resolve_model` resolved already.
    options : LoadOptions, optional
        How to load and run it.
    model_type : {"auto", "masked", "causal"}
        ``"auto"``: read from the model's ``config.json``.
    **kwargs
        Passed to the scorer (``progress``, ``context_token``, or a loading option of ``options``).

    Examples
    --------
    >>> load_scorer("./no/such/folder")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: model './no/such/folder': no such folder ...
    """
    options = take_options(options, kwargs)
    # resolve_model and the classes through their lazy entries: the package imports none of
    # its submodules (each imports the package's light names), so no import circle
    resolved = _PUBLIC.get("resolve_model")(model, model_type, options=options)
    return SCORERS.get(resolved.model_type)(resolved, options, **kwargs)


def take_options(options: LoadOptions | None, kwargs: dict) -> LoadOptions:
    """``options`` with the loading options among ``kwargs`` (taken out of it) in their place."""
    names = [f.name for f in dataclasses.fields(LoadOptions) if f.name in kwargs]
    return dataclasses.replace(options or LoadOptions(), **{k: kwargs.pop(k) for k in names})


# public names imported on first access (torch and transformers are heavy)
_PUBLIC = Registry("public name")
for _name, _module in (
    ("CausalLMScorer", "_causal"),
    ("MaskedLMScorer", "_scorer"),
    ("detect_model_type", "_hub"),
    ("resolve_model", "_hub"),
    ("check_model", "_hub"),
    ("ScoreResult", "_base"),
    ("audit_candidates", "_spans"),
    ("check_score_inputs", "_spans"),
    ("model_context", "_causal"),
    ("preflight", "_preflight"),
    ("normalizer", "_preflight"),
):
    _PUBLIC.register_lazy(_name, f"biasamp.scoring.{_module}:{_name}")
__getattr__ = _PUBLIC.module_getattr("biasamp.scoring")

__all__ = [
    "CausalLMScorer",
    "DEVICE_MAPS",
    "DTYPES",
    "ESTIMATORS",
    "LoadOptions",
    "MODEL_TYPES",
    "MaskedLMScorer",
    "SCORING_MODES",
    "ScoreResult",
    "audit_candidates",
    "check_model",
    "detect_model_type",
    "estimators_for",
    "load_scorer",
    "model_context",
    "preflight",
    "resolve_model",
]


def __dir__():
    return sorted(set(globals()) | set(__all__))
