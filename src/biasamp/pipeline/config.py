"""The probe's configuration: :class:`ProbeConfig` (TOML/YAML loadable) and compat modes.

Every option is checked once, when the config is built (``__post_init__``); the stages that
follow trust it. Compatibility modes are data (:data:`COMPAT_MODES`): a template set, an
estimator and a mapping of base-rate names to their paper-compatible constructions; the
base-rate tables themselves carry the paper's conventions (tie tolerance, undefined cells),
so nothing downstream branches on ``compat``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import BiasampError
from .._files import read_text, toml_loads
from .._registry import Registry, did_you_mean
from .._validation import (Bool, Convert, Integer, Interval, Names, NonEmptyStr, OneOf, Optional,
                           PositiveInt, SubsetOf, check)
from ..base_rates import COMPAT_SOURCES
from ..report import FORMATS
from ..results import TABLE_FORMATS
from ..scoring import (DEVICE_MAPS, ESTIMATORS, canonical_dtype, check_estimator,
                       parse_max_memory)
from .resample import BASE_UNCERTAINTY, RESAMPLE_UNITS

__all__ = ["COMPAT_MODES", "CompatMode", "DEFAULT_TASKS", "ProbeConfig"]

#: The task vocabulary when ``tasks`` is not given and the template set has no own tasks.
DEFAULT_TASKS = "winobias32"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompatMode:
    """What a compatibility mode fixes: template set, estimator, base-rate constructions."""

    templates: str
    scoring: str
    sources: Mapping[str, str]
    description: str


#: Compatibility modes; ``wang2021`` reproduces the BiasAmp-> paper's Table 2 pipeline.
COMPAT_MODES = Registry("compat mode")
COMPAT_MODES.register("wang2021", CompatMode(
    templates="wang2021", scoring="first-piece", sources=COMPAT_SOURCES["wang2021"],
    description="the paper's 20 templates, FitBERT first-piece scoring and the paper's "
                "base-rate constructions"), description="Wang & Russakovsky (2021), Table 2")

# field -> constraint, checked in __post_init__ (the boundary where a config enters)
_CONSTRAINTS = {
    "models": Names(min_size=0, what="model"),
    "templates": NonEmptyStr,
    "attributes": Names(min_size=2, what="attribute"),
    "base_rates": Names(min_size=1, what="base-rate source"),
    "scoring": Optional(OneOf(ESTIMATORS)),
    "model_type": OneOf(("auto", "masked", "causal")),
    "compat": Optional(OneOf(COMPAT_MODES)),
    "device": NonEmptyStr,
    "device_map": Optional(OneOf(DEVICE_MAPS)),
    "max_memory": Optional(Convert(parse_max_memory)),
    "offload_folder": Optional(NonEmptyStr),
    "dtype": Convert(canonical_dtype),
    "batch_size": PositiveInt,
    "revision": Optional(NonEmptyStr),
    "trust_remote_code": Bool,
    "allow_missing_weights": Bool,
    "context_token": Optional(NonEmptyStr),
    "seed": Integer(0),
    "n_resamples": PositiveInt,
    "confidence": Interval(0.0, 1.0),
    "resample": OneOf(RESAMPLE_UNITS),
    "base_uncertainty": OneOf(BASE_UNCERTAINTY),
    "min_base_count": Optional(PositiveInt),
    "max_templates": Optional(PositiveInt),
    "score_cache": Optional(NonEmptyStr),
    "hf_cache_dir": Optional(NonEmptyStr),
    "out": Optional(NonEmptyStr),
    "overwrite": Bool,
    "formats": SubsetOf(FORMATS, min_size=0),
    "tables": OneOf(TABLE_FORMATS),
    "progress": Bool,
    "note": Optional(NonEmptyStr),
}


@dataclass
class ProbeConfig:
    """Everything a probe needs; loadable from TOML or YAML (:meth:`from_file`).

    Parameters
    ----------
    models : list of str
        Hugging Face model ids or local model folders (one result per model).
    templates : str
        Template set name (``biasamp templates --list``) or path to a template file.
    attributes : str or list of str
        Attribute identities, e.g. ``"he,she"`` or ``["he", "she", "they"]``.
    tasks : str or list of str or None
        Task vocabulary: a name (``winobias32``), a file, ``@file``, ``"a,b,c"`` or the words.
        ``None`` (default): the template set's own tasks when its templates are bound to
        them (``winogender``, ``winobias``), else ``winobias32``.
    base_rates : str or list of str
        Base-rate source names (``biasamp base-rates --list``) or ``file:path.csv``.
    scoring : str or None
        Candidate estimator. Masked LMs: ``word`` (all word pieces; their default),
        ``first-piece`` or ``pll``; causal LMs: ``continuation`` (their default) or
        ``sentence``. None: the default of each model's type.
    model_type : str
        ``auto`` (default: from each model's config.json), ``masked`` or ``causal``.
    compat : str or None
        ``"wang2021"`` reproduces the paper's procedure: template set ``wang2021``,
        first-piece scoring and the paper's base-rate constructions (masked LMs only).
    device, dtype, batch_size, revision, trust_remote_code
        Passed to the scorer (:func:`biasamp.scoring.load_scorer`).
    device_map, max_memory, offload_folder
        A model larger than one device: ``device_map="auto"`` lets accelerate place its layers
        over the GPUs, the CPU and ``offload_folder`` (disk), each device holding at most its
        ``max_memory`` (``"0=20GiB,cpu=60GiB"`` or a mapping).
    score_cache : str or None
        Folder of the sqlite score cache (scores of prompts already scored are reused).
    hf_cache_dir : str or None
        Hugging Face download cache, passed to ``from_pretrained(cache_dir=...)``.
    allow_missing_weights : bool
        Probe a checkpoint whose weights are incomplete (e.g. no trained LM head; transformers
        initialises the missing ones at random); the report says so in its first lines.
    context_token : str or None
        Causal LMs: the token put before every sentence. None (default): a document start, the
        BOS the tokenizer adds itself, else a BOS, EOS or document separator that is not a
        chat-turn marker (``<|endoftext|>`` for SmolLM2-Instruct and Qwen-Instruct); the
        choice and its rule are in the provenance and the report.
    seed, n_resamples, confidence
        The bootstrap behind every CI (seeded, percentile interval).
    resample : {"templates", "tasks", "both"}
        What the bootstrap resamples: templates (default: the value is a property of the
        chosen task vocabulary, the templates are a sample of wordings), tasks (to speak of
        occupations beyond the listed ones), or both (a two-way bootstrap).
    base_uncertainty : {"resample", "none"}
        ``resample`` (default): count-based base rates (corpus co-occurrence counts) are
        resampled jointly with the units above, so every CI also covers their sampling
        error, and each association's sign gets its support; statistics and constructed
        tables are fixed either way. ``none``: every base table is treated as exact.
    min_base_count : int or None
        Leave out the tasks with fewer co-occurrences than this in a count-based source
        (reported).
    max_templates : int or None
        Use only the first ``max_templates`` templates of the set (quick runs); for a set of
        templates bound to their own tasks, the first ``max_templates`` of each task.
    out : str or None
        Output directory, written as one transaction (:mod:`biasamp._output`): refused when
        it exists and is not empty, unless ``overwrite``; a second writer is refused; an
        error, Ctrl-C, SIGTERM or SIGHUP leaves the previous result or nothing.
    overwrite : bool
        Replace the probe result ``out`` holds as a whole (no stale files survive); a folder
        with files biasamp did not write, or a result of another kind, is refused.
    formats : list of str
        Reports to write next to the results: any of ``md``, ``html``, ``json``, ``model-card``.
    tables : str
        Probability tables as ``csv`` (default) or ``parquet`` (needs pyarrow).
    progress : bool
        Show progress bars (the CLI turns them on).
    note : str or None
        A free-text note shown at the top of every report (e.g. "tiny random model").

    Examples
    --------
    >>> cfg = ProbeConfig(models=["bert-base-uncased"], base_rates="uniform,labor-2016")
    >>> cfg.base_rates
    ['uniform', 'labor-2016']
    >>> ProbeConfig(models=["m"], compat="wang2021").resolved().scoring
    'first-piece'
    """

    models: list[str] = field(default_factory=list)
    templates: str = "adjectives"
    attributes: list[str] = field(default_factory=lambda: ["he", "she"])
    tasks: str | list[str] | None = None
    base_rates: list[str] = field(default_factory=lambda: ["uniform", "labor-2016"])
    scoring: str | None = None
    model_type: str = "auto"
    compat: str | None = None
    device: str = "auto"
    device_map: str | None = None
    max_memory: dict | None = None
    offload_folder: str | None = None
    dtype: str = "float32"
    batch_size: int = 32
    revision: str | None = None
    trust_remote_code: bool = False
    allow_missing_weights: bool = False
    context_token: str | None = None
    seed: int = 0
    n_resamples: int = 10_000
    confidence: float = 0.95
    resample: str = "templates"
    base_uncertainty: str = "resample"
    min_base_count: int | None = None
    max_templates: int | None = None
    score_cache: str | None = None
    hf_cache_dir: str | None = None
    out: str | None = None
    overwrite: bool = False
    formats: list[str] = field(default_factory=lambda: ["md", "html", "json"])
    tables: str = "csv"
    progress: bool = False
    note: str | None = None

    def __post_init__(self):
        for name, constraint in _CONSTRAINTS.items():
            setattr(self, name, check(getattr(self, name), constraint, name))
        # a vocabulary name/file/"a,b,c" or the words; resolved by biasamp.tasks.load_tasks
        if self.tasks is not None:
            self.tasks = check(self.tasks, NonEmptyStr if isinstance(self.tasks, str) else
                               Names(min_size=2, what="task"), "tasks")
        for name in ("max_memory", "offload_folder"):
            if getattr(self, name) is not None and self.device_map is None:
                raise BiasampError(f"{name} places a model with device_map; give device_map "
                                   f"'auto' (--device-map auto) too (got {name}="
                                   f"{getattr(self, name)!r})")
        if self.model_type != "auto" and self.scoring is not None:
            check_estimator(self.scoring, self.model_type)
        if self.compat is not None and self.model_type == "causal":
            raise BiasampError(f"compat {self.compat!r} reproduces the paper's masked-LM "
                               "procedure (FitBERT first-piece scoring); it cannot be used with "
                               "model_type 'causal'")
        if self.out is not None:  # a result folder never replaces a model it probes
            out = os.path.realpath(os.path.expanduser(self.out))
            for model in self.models:
                where = os.path.realpath(os.path.expanduser(model))
                if os.path.exists(where) and (where == out or where.startswith(out + os.sep)):
                    raise BiasampError(f"out {self.out!r} is or holds the model folder "
                                       f"{model!r}; write the result elsewhere")

    def resolved(self) -> ProbeConfig:
        """Return a copy with the compat mode applied (template set, scoring, sources).

        >>> ProbeConfig(models=["m"], compat="wang2021", base_rates="uniform").resolved().base_rates
        ['uniform-wang2021']
        """
        if self.compat is None:
            return dataclasses.replace(self)
        mode = COMPAT_MODES.get(self.compat)
        changes: dict[str, Any] = {}
        defaults = ProbeConfig.__dataclass_fields__
        for key in ("templates", "scoring"):
            current, wanted = getattr(self, key), getattr(mode, key)
            if current != wanted and current != defaults[key].default:
                log.warning("compat=%r uses %s=%r; ignoring %s=%r", self.compat, key, wanted,
                            key, current)
            changes[key] = wanted
        sources = []
        for name in self.base_rates:
            if name in mode.sources.values():
                sources.append(name)
            elif name in mode.sources:
                sources.append(mode.sources[name])
            else:
                raise BiasampError(
                    f"base_rates: source {name!r} has no {self.compat} construction; with "
                    f"compat={self.compat!r} use some of {sorted(mode.sources)}")
        changes["base_rates"] = sources
        return dataclasses.replace(self, **changes)

    # -- loading -----------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeConfig:
        """Build a config from a mapping; unknown keys are an error (with "did you mean").

        ``model`` is accepted for ``models``, ``format`` for ``formats`` and dashes for
        underscores (``base-rates``), as on the command line.

        >>> ProbeConfig.from_dict({"model": "m", "base-rates": ["uniform"]}).models
        ['m']
        """
        if not isinstance(data, Mapping):
            raise BiasampError(f"config must be a mapping of option names to values; got "
                               f"{type(data).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        kwargs = {}
        for key, value in data.items():
            k = str(key).replace("-", "_")
            k = {"model": "models", "format": "formats"}.get(k, k)
            if k == "cache_dir":
                raise BiasampError(f"config option {key!r} was renamed: use 'score_cache' (the "
                                   "sqlite score cache) or 'hf_cache_dir' (the Hugging Face "
                                   "download cache)")
            if k not in names:
                raise BiasampError(f"unknown config option {key!r}{did_you_mean(k, names)}; "
                                   f"allowed: {', '.join(names)}")
            kwargs[k] = value
        return cls(**kwargs)

    @classmethod
    def from_file(cls, path: str | os.PathLike, **overrides) -> ProbeConfig:
        """Load a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file; keyword overrides win.

        The options may sit at the top level or under a ``[probe]`` table.
        """
        p = Path(path)
        if not p.is_file():
            raise BiasampError(f"config file {str(path)!r} does not exist")
        suffix = p.suffix.lower()
        if suffix not in (".toml", ".yaml", ".yml"):
            raise BiasampError(f"config file must end in .toml, .yaml or .yml; got {str(path)!r}")
        text = read_text(p, "config")
        try:
            if suffix == ".toml":
                data = toml_loads(text)
            else:
                import yaml
                data = yaml.safe_load(text) or {}
        except Exception as exc:  # tomllib.TOMLDecodeError, yaml.YAMLError
            raise BiasampError(f"config file {str(path)!r} is not valid {suffix[1:]}: "
                               f"{' '.join(str(exc).split())}") from None
        if isinstance(data, Mapping) and isinstance(data.get("probe"), Mapping):
            data = data["probe"]
        if isinstance(data, Mapping):
            data = {**data, **{k: v for k, v in overrides.items() if v is not None}}
        return cls.from_dict(data)

    def to_dict(self) -> dict:
        """Plain, JSON-serialisable dict of the options."""
        return dataclasses.asdict(self)


def as_config(config=None, **kwargs) -> ProbeConfig:
    """A :class:`ProbeConfig` from a config, a mapping, a TOML/YAML path, or keywords."""
    if config is None:
        return ProbeConfig(**kwargs)
    if isinstance(config, ProbeConfig):
        return dataclasses.replace(config, **kwargs) if kwargs else config
    if isinstance(config, (str, os.PathLike)):
        return ProbeConfig.from_file(config, **kwargs)
    if isinstance(config, Mapping):
        return ProbeConfig.from_dict({**config, **kwargs})
    raise BiasampError(f"config must be a ProbeConfig, a mapping or a TOML/YAML path; got "
                       f"{type(config).__name__}")
