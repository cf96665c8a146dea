"""The probe's configuration: :class:`ProbeConfig` (one pydantic field per option, from which
the flags, ``--help``, the config-file reader and the docs are generated) and the compat modes.

long on purpose: the table of every probe option, and what is generated from it beside it.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from .._conventions import CONFIDENCE, MODEL_TYPES, N_RESAMPLES
from .._errors import OPTION_NAMES, BiasampError, UnknownNameError, option
from .._files import read_text, toml_loads
from .._registry import Registry, did_you_mean
from .._validation import Names, SubsetOf, check
from ..base_rates import COMPAT_SOURCES
from ..report import FORMATS
from ..results import TABLE_FORMATS
from ..scoring import (
    DEVICE_MAPS,
    ESTIMATORS,
    LoadOptions,
    canonical_dtype,
    check_device,
    check_dtype,
    check_estimator,
    parse_max_memory,
)
from .resample import BASE_UNCERTAINTY, RESAMPLE_UNITS

#: The task vocabulary when ``tasks`` is not given and the template set has no own tasks.
DEFAULT_TASKS = "winobias32"

#: The argument groups of ``biasamp probe``, in --help order.
GROUPS = ("model", "loading the model", "templates and tasks", "base rates", "bootstrap", "output")

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
COMPAT_MODES.register(
    "wang2021",
    CompatMode(
        templates="wang2021",
        scoring="first-piece",
        sources=COMPAT_SOURCES["wang2021"],
        description="the paper's 20 templates, FitBERT first-piece scoring and the paper's "
        "base-rate constructions",
    ),
    description="Wang & Russakovsky (2021), Table 2",
)


# -- the kinds of value an option takes (pydantic checks them; _allowed words them) ------------
PositiveInt = Annotated[int, Field(strict=True, ge=1)]
NonNegativeInt = Annotated[int, Field(strict=True, ge=0)]
Level = Annotated[float, Field(strict=True, gt=0, lt=1, allow_inf_nan=False)]
Switch = Annotated[bool, Field(strict=True)]
Text = Annotated[str, Field(strict=True, pattern=r"\S")]


def _choice(choices) -> Any:
    """One of ``choices`` (a tuple or a :class:`Registry`'s names)."""
    return Literal[tuple(choices.names() if isinstance(choices, Registry) else choices)]


def _checked(convert) -> BeforeValidator:
    """A validator ``convert(value, field_name) -> value`` whose error names the field."""
    return BeforeValidator(lambda value, info: convert(value, info.field_name))


def _names(min_size: int, what: str) -> Any:
    """Distinct names, from a list or a comma-separated string (``"he,she"``)."""
    return Annotated[list[str], _checked(lambda v, name: check(v, Names(min_size, what), name))]


def _attributes(value, name):
    """Distinct names, at least two, or one attribute set alone (all its groups)."""
    from ..templates import is_attribute_set

    one = [value] if isinstance(value, str) else value
    if isinstance(one, list) and len(one) == 1 and is_attribute_set(one[0]):
        return one
    return check(value, Names(2, "attribute"), name)


def _tasks(value, name):
    """A vocabulary name, file or ``"a,b,c"``, or the words as a list."""
    if isinstance(value, str) or value is None:
        return value
    return check(value, Names(min_size=2, what="task"), name)


def _folder(value, name):
    """A folder that exists or can be made: a path at or under a file is refused."""
    if not isinstance(value, str):
        return value  # pydantic refuses it
    path = Path(value).expanduser()
    at = next((p for p in (path, *path.parents) if os.path.lexists(p)), path)
    if os.path.lexists(at) and not at.is_dir():
        where = "is a file" if at == path else f"lies under {str(at)!r}, a file"
        raise BiasampError(
            f"{name} {value!r} {where}, not a folder; give a folder (one that does "
            "not exist yet is made)"
        )
    return value


#: A folder option (``score_cache``, ``hf_cache_dir``, ``offload_folder``).
Folder = Annotated[Text | None, _checked(_folder)]


def _opt(default: Any = None, *, help: str, factory=None, **spelling) -> Any:
    """A field with its help and its command-line ``spelling`` (``group``, ``flags``,
    ``metavar``, ``action``: the ``json_schema_extra``); no ``group``: not a flag."""
    default_kw = {"default_factory": factory} if factory is not None else {"default": default}
    return Field(**default_kw, description=" ".join(help.split()), json_schema_extra=spelling)


#: The registered names an option takes, listed in its --help: (module, function listing them).
_LISTED = Registry("listed option")
_LISTED.register_lazy("templates", "biasamp.templates:list_template_sets")
_LISTED.register_lazy("tasks", "biasamp.tasks:list_task_sets")
_LISTED.register_lazy("base_rates", "biasamp.base_rates:list_sources")


#: The loading options' defaults, written once (in :class:`~biasamp.scoring.LoadOptions`).
_LOADING = LoadOptions()

#: The field makers of the argument groups (``_opt`` without a group: not a flag).
_model, _loading, _templates, _bases, _bootstrap, _output = (
    functools.partial(_opt, group=group) for group in GROUPS
)


class ProbeConfig(BaseModel):
    """Everything a probe needs; loadable from TOML or YAML (:meth:`from_file`); checked when
    built and immutable after.

    Examples
    --------
    >>> cfg = ProbeConfig(models=["bert-base-uncased"], base_rates="uniform,labor-2016")
    >>> cfg.base_rates
    ['uniform', 'labor-2016']
    >>> ProbeConfig(models=["m"], compat="wang2021").resolved().scoring
    'first-piece'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    models: _names(0, "model") = _model(
        factory=list,
        flags=("--model", "-m"),
        metavar="MODEL",
        action="append",
        help="Hugging Face model ids or local model folders (one result per model); on the "
        "command line repeat the option (or comma-separate) for several models: one "
        "sub-folder each, plus a comparison.",
    )
    model_type: _choice(MODEL_TYPES) = _model(
        MODEL_TYPES[0],
        metavar="TYPE",
        help="``auto`` (from each model's config.json), ``masked`` or ``causal``.",
    )
    scoring: _choice(ESTIMATORS) | None = _model(
        None,
        metavar="MODE",
        help="Candidate estimator. Masked LMs: ``word`` (all word pieces, chain rule; their "
        "default), ``first-piece`` (FitBERT) or ``pll``; causal LMs: ``continuation`` "
        "(their default) or ``sentence``. Not given: the default of each model's type.",
    )
    compat: _choice(COMPAT_MODES) | None = _model(
        None,
        metavar="MODE",
        help="``wang2021`` reproduces the paper's procedure: template set ``wang2021``, "
        "first-piece scoring and the paper's base-rate constructions (masked LMs only).",
    )
    context_token: Text | None = _model(
        None,
        metavar="TOKEN",
        help="Causal LMs: the token put before every sentence. Not given: the tokenizer's own "
        "BOS, else a BOS, EOS or document separator that is not a chat-turn marker "
        "(``<|endoftext|>`` for SmolLM2-Instruct and Qwen-Instruct; recorded in the "
        "provenance and the report).",
    )
    device: Annotated[str, _checked(check_device)] = _loading(
        _LOADING.device,
        help="``auto``, ``cpu``, ``cuda``, ``cuda:1``, ``mps``.",
    )
    device_map: _choice(DEVICE_MAPS) | None = _loading(
        _LOADING.device_map,
        metavar="MAP",
        help="``auto`` (or ``balanced``, ``sequential``): accelerate places a model too "
        "large for one device over the GPUs, the CPU and disk. Not given: the whole "
        "model on ``device``.",
    )
    max_memory: Annotated[
        dict | None, _checked(lambda v, name: v if v is None else parse_max_memory(v, name))
    ] = _loading(
        _LOADING.max_memory,
        metavar="LIST",
        help="With ``device_map``: the most each device may hold, e.g. "
        "``0=20GiB,1=20GiB,cpu=60GiB`` (or a mapping).",
    )
    offload_folder: Folder = _loading(
        _LOADING.offload_folder,
        metavar="DIR",
        help="With ``device_map``: where the layers that fit nowhere else go (disk).",
    )
    dtype: Annotated[str, _checked(canonical_dtype)] = _loading(
        _LOADING.dtype,
        help="``float32``, ``bfloat16``, ``float16`` (GPU) or ``float64`` (an exact reference "
        "run, slower).",
    )
    batch_size: PositiveInt = _loading(
        _LOADING.batch_size,
        metavar="N",
        help="Inputs per forward pass: prompts, or masked contexts of sentence pairs.",
    )
    revision: Text | None = _loading(
        _LOADING.revision,
        help="Model revision (branch, tag or commit) on the hub.",
    )
    trust_remote_code: Switch = _loading(
        _LOADING.trust_remote_code,
        help="Allow custom model code from the hub.",
    )
    allow_missing_weights: Switch = _loading(
        _LOADING.allow_missing_weights,
        help="Load a checkpoint with weights missing (e.g. no trained LM head; transformers "
        "initialises them at random): the report says so at its top.",
    )
    score_cache: Folder = _loading(
        _LOADING.score_cache,
        metavar="DIR",
        help="Folder of the sqlite score cache: prompts already scored with the same weights, "
        "tokenizer, estimator and dtype are reused.",
    )
    hf_cache_dir: Folder = _loading(
        _LOADING.hf_cache_dir,
        metavar="DIR",
        help="Hugging Face download cache (``from_pretrained(cache_dir=...)``).",
    )
    templates: Text = _templates(
        "adjectives",
        metavar="SET",
        help="Template set name (``biasamp templates --list``) or path to a template file.",
    )
    attributes: Annotated[list[str], _checked(_attributes)] = _templates(
        factory=lambda: ["he", "she"],
        metavar="LIST",
        help="Attribute identities, e.g. ``he,she`` or ``he,she,they``; groups "
        "(``white,black,asian``), or an attribute set: a name (``race``) or a TOML file in "
        "the format of ``templates/attributes/`` (all its groups).",
    )
    tasks: Annotated[Text | list[str] | None, _checked(_tasks)] = _templates(
        None,
        metavar="VOCAB",
        help="Task vocabulary: a name, a file, ``@file``, ``a,b,c`` or the words. Not given: "
        "the template set's own tasks when its templates are bound to them "
        "(``winogender``, ``winobias``), else ``winobias32``.",
    )
    max_templates: PositiveInt | None = _templates(
        None,
        metavar="N",
        help="Use only the first N templates of the set (quick runs); for a set of templates "
        "bound to their own tasks, the first N of each task.",
    )
    base_rates: _names(1, "base-rate source") = _bases(
        factory=lambda: ["uniform", "labor-2016"],
        metavar="LIST",
        help="Base-rate sources (``biasamp base-rates --list``) or ``file:PATH.csv``, "
        "comma-separated.",
    )
    base_uncertainty: _choice(BASE_UNCERTAINTY) = _bases(
        "resample",
        metavar="MODE",
        help="``resample``: count-based base rates (corpus co-occurrences) are resampled with "
        "the bootstrap's units, so every CI covers their sampling error and each "
        "association's sign gets its support. ``none``: every base table is exact.",
    )
    min_base_count: PositiveInt | None = _bases(
        None,
        metavar="N",
        help="Leave out the tasks with fewer than N co-occurrences in a count-based source "
        "(reported).",
    )
    seed: NonNegativeInt = _bootstrap(0, help="Seed of the bootstrap behind every CI.")
    n_resamples: PositiveInt = _bootstrap(N_RESAMPLES, metavar="N", help="Bootstrap resamples.")
    confidence: Level = _bootstrap(CONFIDENCE, help="Level of the percentile bootstrap CIs.")
    resample: _choice(RESAMPLE_UNITS) = _bootstrap(
        "templates",
        metavar="UNITS",
        help="What the bootstrap resamples: ``templates`` (the value is a property of the "
        "chosen task vocabulary, the templates are a sample of wordings), ``tasks`` (to "
        "speak of occupations beyond the listed ones) or ``both`` (a two-way bootstrap).",
    )
    out: Text | None = _output(
        None,
        flags=("--out", "-o"),
        metavar="DIR",
        help="Output folder (required), written as one transaction: refused when it exists "
        "and is not empty, unless ``overwrite``; a second writer is refused; an error, "
        "Ctrl-C, SIGTERM or SIGHUP leaves the previous result or nothing.",
    )
    overwrite: Switch = _output(
        False,
        help="Replace the probe result ``out`` holds as a whole (no stale files survive); a "
        "folder with files biasamp did not write, or a result of another kind, is "
        "refused.",
    )
    formats: Annotated[
        list[str], _checked(lambda v, name: check(v, SubsetOf(FORMATS, 0), name))
    ] = _output(
        factory=lambda: ["md", "html", "json"],
        flags=("--format",),
        metavar="LIST",
        help="Reports to write next to the results: any of ``md``, ``html``, ``json``, "
        "``model-card``.",
    )
    tables: _choice(TABLE_FORMATS) = _output(
        "csv",
        metavar="FMT",
        help="Probability tables as ``csv`` or ``parquet`` (needs pyarrow).",
    )
    note: Text | None = _output(
        None,
        metavar="TEXT",
        help='A free-text note shown at the top of every report (e.g. "tiny random model").',
    )
    progress: Switch = _opt(
        False,
        help="Show the standard progress display on stderr (the command line shows it; ``-q`` "
        "does not); ``probe(progress=...)`` may give a reporter of its own instead.",
    )

    def __init__(self, **values):
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise _one_line(exc, OPTION_NAMES.get()) from None

    @model_validator(mode="after")
    def _consistent(self) -> ProbeConfig:
        """The checks across options."""
        for name in ("max_memory", "offload_folder"):
            if getattr(self, name) is not None and self.device_map is None:
                raise BiasampError(
                    f"{option(name)} {getattr(self, name)!r} places a model with "
                    f"{option('device_map')}; give {option('device_map', 'auto')} too"
                )
        if self.device in ("cpu", "mps"):  # "auto" and CUDA are checked once resolved
            check_dtype(self.dtype, self.device)
        if self.model_type != "auto" and self.scoring is not None:
            check_estimator(self.scoring, self.model_type)
        if self.compat is not None and self.model_type == "causal":
            raise BiasampError(f"{self.masked_only}; it cannot be used with model_type 'causal'")
        if self.out is not None:  # a result folder never replaces a model or a cache
            for model in self.models:
                if os.path.exists(os.path.expanduser(model)) and _inside(model, self.out):
                    raise BiasampError(
                        f"{option('out')} {self.out!r} is or holds the model folder "
                        f"{model!r}; write the result elsewhere"
                    )
            if self.score_cache is not None and _inside(self.score_cache, self.out):
                raise BiasampError(
                    f"{option('score_cache')} {self.score_cache!r} lies in {option('out')} "
                    f"{self.out!r}, which a probe replaces as a whole (the cache would go with "
                    f"the old result); keep the score cache outside {option('out')}"
                )
        return self

    def resolved(self) -> ProbeConfig:
        """Return a copy with the compat mode applied (template set, scoring, sources).

        >>> ProbeConfig(models=["m"], compat="wang2021", base_rates="uniform").resolved().base_rates
        ['uniform-wang2021']
        """
        if self.compat is None:
            return self.model_copy()
        mode = COMPAT_MODES.get(self.compat)
        changes: dict[str, Any] = {}
        for key in ("templates", "scoring"):
            current, wanted = getattr(self, key), getattr(mode, key)
            if current != wanted and key in self.model_fields_set:  # given, even as the default
                log.warning(
                    "compat=%r uses %s=%r; ignoring %s=%r", self.compat, key, wanted, key, current
                )
            changes[key] = wanted
        for name in self.base_rates:  # a plain source or its construction
            if name not in mode.sources and name not in mode.sources.values():
                raise BiasampError(
                    f"base_rates: source {name!r} has no {self.compat} construction; with "
                    f"compat={self.compat!r} use some of {sorted(mode.sources)}"
                )
        changes["base_rates"] = [mode.sources.get(name, name) for name in self.base_rates]
        return self.model_copy(update=changes)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, names: Mapping[str, str] | None = None
    ) -> ProbeConfig:
        """Build a config from a mapping; an unknown key is refused (with "did you mean").

        ``model`` is accepted for ``models``, ``format`` for ``formats`` and dashes for
        underscores (``base-rates``), as on the command line. A refused value is named by its
        key, or by ``names[key]`` (a flag, for the values of the command line).

        >>> ProbeConfig.from_dict({"model": "m", "base-rates": ["uniform"]}).models
        ['m']
        """
        if not isinstance(data, Mapping):
            raise BiasampError(
                f"config must be a mapping of option names to values; got {type(data).__name__}"
            )
        names = names or {}
        values, shown = {}, {}
        for key, value in data.items():
            field = str(key).replace("-", "_")
            field = {"model": "models", "format": "formats"}.get(field, field)
            values[field], shown[field] = value, names.get(key, str(key))
        token = OPTION_NAMES.set({**OPTION_NAMES.get(), **shown})  # the others as before
        try:
            return cls(**values)
        finally:
            OPTION_NAMES.reset(token)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike, *, names: Mapping[str, str] | None = None, **overrides
    ) -> ProbeConfig:
        """Load a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file; keyword overrides that
        are not None win (``names``: how an error names an override, e.g. by its flag).

        The options may sit at the top level or under a ``[probe]`` table.
        """
        p = Path(path)
        if not p.exists():
            raise BiasampError(f"config file {str(path)!r} does not exist")
        if not p.is_file():
            raise BiasampError(
                f"config file {str(path)!r} is not a regular file (a folder, device, FIFO or "
                "socket); give a TOML or YAML file"
            )
        suffix = p.suffix.lower()
        if suffix not in (".toml", ".yaml", ".yml"):
            raise BiasampError(f"config file must end in .toml, .yaml or .yml; got {str(path)!r}")
        text = read_text(p, "config")
        try:
            data = toml_loads(text) if suffix == ".toml" else (yaml.safe_load(text) or {})
        except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError, yaml.YAMLError
            raise BiasampError(
                f"config file {str(path)!r} is not valid {suffix[1:]}: {' '.join(str(exc).split())}"
            ) from None
        if isinstance(data, Mapping) and isinstance(data.get("probe"), Mapping):
            data = data["probe"]
        if isinstance(data, Mapping):
            overrides = {k: v for k, v in overrides.items() if v is not None}
            data = {**data, **overrides}
            names = {k: (names or {}).get(k, k) for k in overrides}
        return cls.from_dict(data, names=names)

    @classmethod
    def from_cli(cls, args) -> ProbeConfig:
        """The config of parsed ``biasamp probe`` arguments: the ``--config`` file (if any)
        with the flags given on top (``args.option_names``: option -> its flag); a refused
        value is named by its flag (or its key)."""
        flags = args.option_names
        given = {name: getattr(args, name) for name in flags if getattr(args, name) is not None}
        if getattr(args, "config", None):
            return cls.from_file(args.config, names=flags, **given)
        return cls.from_dict(given, names=flags)

    @property
    def masked_only(self) -> str | None:
        """Why only masked LMs are taken (the compat mode's reason), or None."""
        return self.compat and (
            f"compat {self.compat!r} reproduces the paper's masked-LM procedure (FitBERT "
            "first-piece scoring)"
        )


def _inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies in it (user paths, links resolved)."""
    where, folder = (os.path.realpath(os.path.expanduser(p)) for p in (path, folder))
    return where == folder or where.startswith(folder + os.sep)


def as_config(config=None, **kwargs) -> ProbeConfig:
    """A :class:`ProbeConfig` from a config, a mapping, a TOML/YAML path, or keywords."""
    if config is None:
        return ProbeConfig(**kwargs)
    if isinstance(config, ProbeConfig):
        # the options given stay those given (model_fields_set: what compat overrides)
        return (
            ProbeConfig(**{**config.model_dump(exclude_unset=True), **kwargs}) if kwargs else config
        )
    if isinstance(config, (str, os.PathLike)):
        return ProbeConfig.from_file(config, **kwargs)
    if isinstance(config, Mapping):
        return ProbeConfig.from_dict({**config, **kwargs})
    raise BiasampError(
        f"config must be a ProbeConfig, a mapping or a TOML/YAML path; got {type(config).__name__}"
    )


# -- what is generated from the fields: messages, flags, --help, docs -------------------------
def _extra(name: str) -> dict:
    return ProbeConfig.model_fields[name].json_schema_extra or {}


@functools.cache
def _schema() -> dict:
    """Each option's JSON Schema (pydantic's, from the field's type and constraints)."""
    return ProbeConfig.model_json_schema()["properties"]


def _kind(name: str) -> dict:
    """The schema of an option's value other than None."""
    schema = _schema()[name]
    kind = next((s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"), schema)
    return {**kind, "enum": [kind["const"]]} if "const" in kind else kind  # a one-name Literal


def _allowed(name: str) -> str:
    """What an option allows, in words (``a positive integer``, ``one of 'csv', 'parquet'``)."""
    kind = _kind(name)
    if "enum" in kind:
        return "one of " + ", ".join(repr(v) for v in kind["enum"])
    if kind.get("type") == "integer":
        return {0: "a non-negative integer", 1: "a positive integer"}[kind["minimum"]]
    if kind.get("type") == "number":
        return f"a number in ({kind['exclusiveMinimum']:g}, {kind['exclusiveMaximum']:g})"
    return {"boolean": "True or False", "string": "a non-empty string"}[kind.get("type")]


def _one_line(exc: ValidationError, shown: Mapping[str, str] | None = None) -> BiasampError:
    """The house message of pydantic's first error: the parameter as it was given (``shown``
    maps a field to its key or flag; default the field), what it allows, the value given."""
    err = exc.errors(include_url=False)[0]
    field = str(err["loc"][0]) if err["loc"] else ""
    name = (shown or {}).get(field, field)
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, Exception):  # our checks' own one-line message, naming the field
        text = str(cause)
        if field and text.startswith(field + " "):
            text = name + text[len(field) :]
        return (type(cause) if isinstance(cause, BiasampError) else BiasampError)(text)
    if err["type"] == "extra_forbidden":
        return BiasampError(
            f"unknown config option {name!r}"
            f"{did_you_mean(field, ProbeConfig.model_fields)}; allowed: "
            f"{', '.join(ProbeConfig.model_fields)}"
        )
    value, choices = err["input"], _kind(field).get("enum")
    hint = did_you_mean(str(value), choices) if choices else ""
    return (UnknownNameError if choices else BiasampError)(
        f"{name} must be {_allowed(field)}; got {value!r}{hint}"
    )


def cli_flags(name: str) -> tuple[str, ...]:
    """How the command line spells an option (first the long flag)."""
    return tuple(_extra(name).get("flags") or ("--" + name.replace("_", "-"),))


def cli_type(name: str) -> type:
    """The Python type of an option's value on the command line (``int``, ``float``,
    ``bool`` for a switch, else ``str``)."""
    return {"integer": int, "number": float, "boolean": bool}.get(_kind(name).get("type"), str)


def _default(name: str):
    return ProbeConfig.model_fields[name].get_default(call_default_factory=True)


def _shown(default) -> str:
    return ",".join(map(str, default)) if isinstance(default, list) else str(default)


def cli_help(name: str) -> str:
    """An option's ``--help``: its help (````x```` as the flag of option ``x``, else ``'x'``),
    the registered names it takes, its default unless None, False or empty; ``%`` escaped."""
    text = re.sub(
        r"``(.+?)``",
        lambda m: cli_flags(m[1])[0] if m[1] in ProbeConfig.model_fields else f"'{m[1]}'",
        ProbeConfig.model_fields[name].description,
    )
    if name in _LISTED.names():
        text += f" [{', '.join(_LISTED.get(name)())}]"
    default = _default(name)
    if not (default is None or default is False or default == []):
        text += f" (default: {_shown(default)})"
    return text.replace("%", "%%")


def _doc_type(name: str) -> str:
    """The numpydoc type of an option (``int or None``), from its schema."""
    schema = _schema()[name]
    words = {
        "integer": "int",
        "number": "float",
        "boolean": "bool",
        "string": "str",
        "array": "list of str",
        "object": "dict",
        "null": "None",
    }
    kinds = [
        "{" + ", ".join(repr(v) for v in s.get("enum", [s.get("const")])) + "}"
        if "enum" in s or "const" in s
        else words[s["type"]]
        for s in schema.get("anyOf", [schema])
    ]
    return " or ".join(dict.fromkeys(kinds))


def _parameters_doc() -> str:
    """The numpydoc ``Parameters`` section of :class:`ProbeConfig`."""
    lines = ["Parameters", "----------"]
    for name, field in ProbeConfig.model_fields.items():
        text = textwrap.fill(field.description, width=84, break_on_hyphens=False)
        lines += [f"{name} : {_doc_type(name)}", textwrap.indent(text, "    ")]
    return "\n".join(lines)


ProbeConfig.__doc__ = ProbeConfig.__doc__.replace(
    "    Examples\n", textwrap.indent(_parameters_doc(), "    ") + "\n\n    Examples\n", 1
)


def options_markdown() -> str:
    """The options page of the docs: one Markdown table per argument group (key, flag,
    default, what it allows, help), generated from the fields."""
    out = []
    for title in (*GROUPS, None):
        names = [n for n in ProbeConfig.model_fields if _extra(n).get("group") == title]
        out += [
            f"## {title or 'Python only'}",
            "",
            "| Key | Flag | Default | Allowed | Description |",
            "|---|---|---|---|---|",
        ]
        for name in names:
            kind = _kind(name)
            scalar = "enum" in kind or kind.get("type") in ("integer", "number", "boolean")
            allowed = _allowed(name) if scalar else _doc_type(name)
            flags = ", ".join(f"`{f}`" for f in cli_flags(name)) if title else ""
            default = _default(name)
            text = re.sub(r"``(.+?)``", r"`\1`", ProbeConfig.model_fields[name].description)
            shown = f"`{_shown(default)}`" if default not in (None, []) else ""
            cells = [f"`{name}`", flags, shown, allowed, text]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    return "\n".join(out)
