"""The probe's configuration: :class:`ProbeConfig` (TOML/YAML loadable) and compat modes.

Every option is checked once, when the config is built (``__post_init__``); the stages that
follow trust it. Compatibility modes are data (:data:`COMPAT_MODES`): a template set, an
estimator and a mapping of base-rate names to their paper-compatible constructions; the
base-rate tables themselves carry the paper's conventions (tie tolerance, undefined cells),
so nothing downstream branches on ``compat``.

This module is long on purpose: the body of :class:`ProbeConfig` is the table of every probe
option (its default, check, help and flag, declared once each), which the docstring and the
CLI are generated from; split, one option would be described in two places again.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
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
from ._options import config_options, option, parameters_doc
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

def _template_sets():
    from ..templates import list_template_sets
    return list_template_sets()


def _task_sets():
    from ..tasks import list_task_sets
    return list_task_sets()


def _sources():
    from ..base_rates import list_sources
    return list_sources()


@dataclass
class ProbeConfig:
    """Everything a probe needs; loadable from TOML or YAML (:meth:`from_file`).

    Each option is declared once below, with its default, its check and its help
    (:func:`~biasamp.pipeline._options.option`); the Parameters section of this docstring and
    the options of ``biasamp probe`` are generated from them.

    Examples
    --------
    >>> cfg = ProbeConfig(models=["bert-base-uncased"], base_rates="uniform,labor-2016")
    >>> cfg.base_rates
    ['uniform', 'labor-2016']
    >>> ProbeConfig(models=["m"], compat="wang2021").resolved().scoring
    'first-piece'
    """

    # -- the model ---------------------------------------------------------------
    models: list[str] = option(
        factory=list, constraint=Names(min_size=0, what="model"), group="model",
        flags=("--model", "-m"), metavar="MODEL", action="append",
        help="Hugging Face model ids or local model folders (one result per model); on the "
             "command line repeat the option (or comma-separate) for several models: one "
             "sub-folder each, plus a comparison.")
    model_type: str = option(
        "auto", OneOf(("auto", "masked", "causal")), group="model", metavar="TYPE",
        help="``auto`` (from each model's config.json), ``masked`` or ``causal``.")
    scoring: str | None = option(
        None, Optional(OneOf(ESTIMATORS)), group="model", metavar="MODE",
        help="Candidate estimator. Masked LMs: ``word`` (all word pieces, chain rule; their "
             "default), ``first-piece`` (FitBERT) or ``pll``; causal LMs: ``continuation`` "
             "(their default) or ``sentence``. Not given: the default of each model's type.")
    compat: str | None = option(
        None, Optional(OneOf(COMPAT_MODES)), group="model", metavar="MODE",
        help="``wang2021`` reproduces the paper's procedure: template set ``wang2021``, "
             "first-piece scoring and the paper's base-rate constructions (masked LMs only).")
    context_token: str | None = option(
        None, Optional(NonEmptyStr), group="model", metavar="TOKEN",
        help="Causal LMs: the token put before every sentence. Not given: a document start, "
             "the BOS the tokenizer adds itself, else a BOS, EOS or document separator that "
             "is not a chat-turn marker (``<|endoftext|>`` for SmolLM2-Instruct and "
             "Qwen-Instruct); the choice and its rule are in the provenance and the report.")
    # -- loading the model (also the options of `biasamp score` and `biasamp pairs`) -----
    device: str = option(
        "auto", NonEmptyStr, group="loading the model",
        help="``auto``, ``cpu``, ``cuda``, ``cuda:1``, ``mps``.")
    device_map: str | None = option(
        None, Optional(OneOf(DEVICE_MAPS)), group="loading the model", metavar="MAP",
        help="``auto`` (or ``balanced``, ``sequential``): accelerate places a model too "
             "large for one device over the GPUs, the CPU and disk. Not given: the whole "
             "model on ``device``.")
    max_memory: dict | None = option(
        None, Optional(Convert(parse_max_memory)), group="loading the model", metavar="LIST",
        doc_type="str or dict or None",
        help="With ``device_map``: the most each device may hold, e.g. "
             "``0=20GiB,1=20GiB,cpu=60GiB`` (or a mapping).")
    offload_folder: str | None = option(
        None, Optional(NonEmptyStr), group="loading the model", metavar="DIR",
        help="With ``device_map``: where the layers that fit nowhere else go (disk).")
    dtype: str = option(
        "float32", Convert(canonical_dtype), group="loading the model",
        help="``float32``, ``bfloat16``, ``float16`` (GPU) or ``float64`` (an exact reference "
             "run, slower).")
    batch_size: int = option(
        32, PositiveInt, group="loading the model", type=int, metavar="N",
        help="Inputs per forward pass: prompts, or masked contexts of sentence pairs.")
    revision: str | None = option(
        None, Optional(NonEmptyStr), group="loading the model",
        help="Model revision (branch, tag or commit) on the hub.")
    trust_remote_code: bool = option(
        False, Bool, group="loading the model", action="store_true",
        help="Allow custom model code from the hub.")
    allow_missing_weights: bool = option(
        False, Bool, group="loading the model", action="store_true",
        help="Load a checkpoint with weights missing (e.g. no trained LM head; transformers "
             "initialises them at random): the report says so at its top.")
    score_cache: str | None = option(
        None, Optional(NonEmptyStr), group="loading the model", metavar="DIR",
        help="Folder of the sqlite score cache: prompts already scored with the same weights, "
             "tokenizer, estimator and dtype are reused.")
    hf_cache_dir: str | None = option(
        None, Optional(NonEmptyStr), group="loading the model", metavar="DIR",
        help="Hugging Face download cache (``from_pretrained(cache_dir=...)``).")
    # -- templates and tasks -----------------------------------------------------
    templates: str = option(
        "adjectives", NonEmptyStr, group="templates and tasks", metavar="SET",
        names=_template_sets,
        help="Template set name (``biasamp templates --list``) or path to a template file.")
    attributes: list[str] = option(
        factory=lambda: ["he", "she"], constraint=Names(min_size=2, what="attribute"),
        group="templates and tasks", metavar="LIST",
        help="Attribute identities, e.g. ``he,she`` or ``he,she,they``.")
    tasks: str | list[str] | None = option(
        None, None, group="templates and tasks", metavar="VOCAB", names=_task_sets,
        help="Task vocabulary: a name, a file, ``@file``, ``a,b,c`` or the words. Not given: "
             "the template set's own tasks when its templates are bound to them "
             "(``winogender``, ``winobias``), else ``winobias32``.")
    max_templates: int | None = option(
        None, Optional(PositiveInt), group="templates and tasks", type=int, metavar="N",
        help="Use only the first N templates of the set (quick runs); for a set of templates "
             "bound to their own tasks, the first N of each task.")
    # -- base rates --------------------------------------------------------------
    base_rates: list[str] = option(
        factory=lambda: ["uniform", "labor-2016"],
        constraint=Names(min_size=1, what="base-rate source"), group="base rates",
        metavar="LIST", names=_sources,
        help="Base-rate sources (``biasamp base-rates --list``) or ``file:PATH.csv``, "
             "comma-separated.")
    base_uncertainty: str = option(
        "resample", OneOf(BASE_UNCERTAINTY), group="base rates", metavar="MODE",
        help="``resample``: count-based base rates (corpus co-occurrence counts) are "
             "resampled jointly with the bootstrap's units, so every CI also covers their "
             "sampling error, and each association's sign gets its support; statistics and "
             "constructed tables are fixed either way. ``none``: every base table is treated "
             "as exact.")
    min_base_count: int | None = option(
        None, Optional(PositiveInt), group="base rates", type=int, metavar="N",
        help="Leave out the tasks with fewer than N co-occurrences in a count-based source "
             "(reported).")
    # -- the bootstrap -----------------------------------------------------------
    seed: int = option(0, Integer(0), group="bootstrap", type=int,
                       help="Seed of the bootstrap behind every CI.")
    n_resamples: int = option(10_000, PositiveInt, group="bootstrap", type=int, metavar="N",
                              help="Bootstrap resamples.")
    confidence: float = option(0.95, Interval(0.0, 1.0), group="bootstrap", type=float,
                               help="Level of the percentile bootstrap CIs.")
    resample: str = option(
        "templates", OneOf(RESAMPLE_UNITS), group="bootstrap", metavar="UNITS",
        help="What the bootstrap resamples: ``templates`` (the value is a property of the "
             "chosen task vocabulary, the templates are a sample of wordings), ``tasks`` (to "
             "speak of occupations beyond the listed ones) or ``both`` (a two-way bootstrap).")
    # -- output ------------------------------------------------------------------
    out: str | None = option(
        None, Optional(NonEmptyStr), group="output", flags=("--out", "-o"), metavar="DIR",
        help="Output folder (required), written as one transaction: refused when it exists "
             "and is not empty, unless ``overwrite``; a second writer is refused; an error, "
             "Ctrl-C, SIGTERM or SIGHUP leaves the previous result or nothing.")
    overwrite: bool = option(
        False, Bool, group="output", action="store_true",
        help="Replace the probe result ``out`` holds as a whole (no stale files survive); a "
             "folder with files biasamp did not write, or a result of another kind, is "
             "refused.")
    formats: list[str] = option(
        factory=lambda: ["md", "html", "json"], constraint=SubsetOf(FORMATS, min_size=0),
        group="output", flags=("--format",), metavar="LIST",
        help="Reports to write next to the results: any of ``md``, ``html``, ``json``, "
             "``model-card``.")
    tables: str = option(
        "csv", OneOf(TABLE_FORMATS), group="output", metavar="FMT",
        help="Probability tables as ``csv`` or ``parquet`` (needs pyarrow).")
    note: str | None = option(
        None, Optional(NonEmptyStr), group="output", metavar="TEXT",
        help="A free-text note shown at the top of every report (e.g. \"tiny random model\").")
    progress: bool = option(
        False, Bool, group=None,
        help="Show the standard progress display on stderr (the command line shows it; ``-q`` "
             "does not); ``probe(progress=...)`` may give a reporter of its own instead.")

    def __post_init__(self):
        for opt in _OPTIONS:
            if opt.constraint is not None:
                setattr(self, opt.name, check(getattr(self, opt.name), opt.constraint,
                                              opt.name))
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
                    raise BiasampError(f"--out {self.out!r} is or holds the model folder "
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
        defaults = {opt.name: opt.default for opt in _OPTIONS}
        for key in ("templates", "scoring"):
            current, wanted = getattr(self, key), getattr(mode, key)
            if current != wanted and current != defaults[key]:
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
        names = [opt.name for opt in _OPTIONS]
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
        except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError, yaml.YAMLError
            raise BiasampError(f"config file {str(path)!r} is not valid {suffix[1:]}: "
                               f"{' '.join(str(exc).split())}") from None
        if isinstance(data, Mapping) and isinstance(data.get("probe"), Mapping):
            data = data["probe"]
        if isinstance(data, Mapping):
            data = {**data, **{k: v for k, v in overrides.items() if v is not None}}
        return cls.from_dict(data)

    @classmethod
    def options(cls) -> list:
        """Every option as a :class:`~biasamp.pipeline.ConfigOption` (name, default, check,
        help, command-line flags and group), in field order."""
        return list(_OPTIONS)

    def to_dict(self) -> dict:
        """Plain, JSON-serialisable dict of the options."""
        return dataclasses.asdict(self)


#: The options of ProbeConfig, in field order (one place for their help, default and check).
_OPTIONS = config_options(ProbeConfig)
ProbeConfig.__doc__ = ProbeConfig.__doc__.replace(
    "    Examples\n", textwrap.indent(parameters_doc(ProbeConfig), "    ") + "\n\n    Examples\n", 1)


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
