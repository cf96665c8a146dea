"""The provenance of a probe result, typed: small frozen dataclasses read by attribute.

long on purpose: one small class per part of the provenance, each with the checks of the
keys it reads beside its fields; split, the one layout would be scattered.

``results.json``'s ``provenance`` (schema 3) is :class:`Provenance`: the model once
(:class:`ModelInfo`), how it was scored (:class:`ScorerInfo`), the templates, tasks,
attributes, bootstrap settings, the base-rate tables nested by source, then direction
(:class:`BaseRatesInfo`), the design, versions, platform, note, timestamp, seed and compat
mode. Each class has ``to_dict`` (JSON-ready) and ``from_dict``, which checks every key's
presence and type and fails with one line naming the file and the key's path
(``results.json: provenance.scorer.device must be a string; got 3``); a missing key fails
there, not as ``None`` in a report. ``biasamp._schema.upgrade_v2`` turns a schema-2 provenance (flat
``source|direction`` keys, model fields at the top level and under ``scorer``) into this
layout; it is the one place that reads those keys.

Parts that are open by nature stay dicts and are named so: a base source's own provenance
(:attr:`BaseRatesInfo.source`), a template set's own metadata
(:attr:`TemplatesInfo.set_provenance`), the design (:attr:`Provenance.design`, the form of
``biasamp.pipeline._design.Design.to_dict``) and the library versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass

from ._conventions import DIRECTIONS
from ._errors import BiasampError

__all__ = ["BaseRatesInfo", "BootstrapInfo", "ContextInfo", "ModelInfo", "PlacementInfo",
           "Provenance", "ScorerInfo", "TasksInfo", "TemplatesInfo"]

_STR, _OPT_STR, _INT, _OPT_INT = "a string", "a string or null", "an integer", "an integer or null"
_NUM, _BOOL, _OPT_BOOL = "a number", "true or false", "true, false or null"
_STRS, _OBJ, _OPT_OBJ = "a list of strings", "an object", "an object or null"
_STR_MAP, _OPT_STR_MAP = "an object of strings", "an object of strings or null"
_NUM_MAP, _OPT_NUM_MAP = "an object of numbers", "an object of numbers or null"
_INT_MAP = "an object of integers"


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_CHECKS = {
    _STR: lambda v: isinstance(v, str),
    _OPT_STR: lambda v: v is None or isinstance(v, str),
    _INT: _is_int,
    _OPT_INT: lambda v: v is None or _is_int(v),
    _NUM: _is_num,
    _BOOL: lambda v: isinstance(v, bool),
    _OPT_BOOL: lambda v: v is None or isinstance(v, bool),
    _STRS: lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    _OBJ: lambda v: isinstance(v, dict),
    _OPT_OBJ: lambda v: v is None or isinstance(v, dict),
    _STR_MAP: lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    _OPT_STR_MAP: lambda v: v is None or _CHECKS[_STR_MAP](v),
    _NUM_MAP: lambda v: isinstance(v, dict) and all(_is_num(x) for x in v.values()),
    _OPT_NUM_MAP: lambda v: v is None or _CHECKS[_NUM_MAP](v),
    _INT_MAP: lambda v: isinstance(v, dict) and all(_is_int(x) for x in v.values()),
}


def _short(value, limit: int = 60) -> str:
    """The repr of a refused value, cut to ``limit`` characters (one line in a message)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Reader:
    """Typed reads of one JSON object at ``at`` (e.g. ``provenance.scorer``) of ``path``."""

    def __init__(self, data, at: str, path: str):
        if not isinstance(data, dict):
            raise BiasampError(f"{path}: {at} must be an object; got {_short(data)}")
        self.data, self.at, self.path = data, at, path

    def __call__(self, key: str, kind: str):
        if key not in self.data:
            raise BiasampError(f"{self.path}: {self.at} lacks the key {key!r}")
        value = self.data[key]
        if not _CHECKS[kind](value):
            raise BiasampError(f"{self.path}: {self.at}.{key} must be {kind}; got "
                               f"{_short(value)}")
        return tuple(value) if kind == _STRS else value

    def sub(self, key: str, cls, *, optional: bool = False):
        """The nested object at ``key`` read by ``cls.from_dict``; ``optional``: null is
        None (the key is still required)."""
        if optional and key in self.data and self.data[key] is None:
            return None
        self(key, _OBJ)
        return cls.from_dict(self.data[key], at=f"{self.at}.{key}", path=self.path)


def _json_ready(value):
    if is_dataclass(value):
        return {f.name: _json_ready(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _json_ready(v) for k, v in value.items()}
    return value


class _Info:
    """``to_dict``: the fields as JSON-ready values (nested parts as objects, tuples as
    lists), the form ``from_dict`` reads."""

    def to_dict(self) -> dict:
        return _json_ready(self)


@dataclass(frozen=True)
class ModelInfo(_Info):
    """The model: id or folder, type and the evidence for it, revision, commit, the sha256
    of each weight file, classes, and the weights missing from its checkpoint (allowed with
    ``--allow-missing-weights``; empty otherwise)."""

    name: str
    model_type: str
    model_type_from: str
    revision: str | None
    commit: str | None
    weights_sha256: dict
    model_class: str
    tokenizer_class: str
    missing_weights: tuple = ()

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.model",
                  path: str = "results.json") -> ModelInfo:
        r = _Reader(data, at, path)
        return cls(r("name", _STR), r("model_type", _STR), r("model_type_from", _STR),
                   r("revision", _OPT_STR), r("commit", _OPT_STR),
                   r("weights_sha256", _STR_MAP), r("model_class", _STR),
                   r("tokenizer_class", _STR), r("missing_weights", _STRS))

    @classmethod
    def of_scorer(cls, scorer: Mapping, *, name: str) -> ModelInfo:
        """From a scorer's own provenance (``BaseScorer.provenance``); ``name`` is the model
        as the run was asked for it."""
        return cls(name, scorer["model_type"], scorer["model_type_from"], scorer["revision"],
                   scorer["commit"], dict(scorer["weights_sha256"]), scorer["model_class"],
                   scorer["tokenizer_class"], tuple(scorer.get("missing_weights", ())))


@dataclass(frozen=True)
class ContextInfo(_Info):
    """The token a causal LM reads before each sentence, the rule that chose it, whether the
    tokenizer has a chat template, and the chat markers passed over."""

    token: str
    rule: str
    chat_template: bool
    skipped: tuple = ()

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.context",
                  path: str = "results.json") -> ContextInfo:
        r = _Reader(data, at, path)
        return cls(r("token", _STR), r("rule", _STR), r("chat_template", _BOOL),
                   r("skipped", _STRS))


@dataclass(frozen=True)
class PlacementInfo(_Info):
    """An accelerate placement (``--device-map``): the strategy and how many modules each
    device holds."""

    strategy: str
    modules: dict

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.device_map",
                  path: str = "results.json"
                  ) -> PlacementInfo:
        r = _Reader(data, at, path)
        return cls(r("strategy", _STR), r("modules", _INT_MAP))


@dataclass(frozen=True)
class ScorerInfo(_Info):
    """How the model was run: estimator (scoring mode), device, dtype, placement, and for a
    causal LM its context token, key/value prefix sharing and LM-head split."""

    estimator: str
    device: str
    dtype: str
    device_map: PlacementInfo | None = None
    context: ContextInfo | None = None
    share_prefix: bool | None = None
    head_split: bool | None = None

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.scorer",
                  path: str = "results.json") -> ScorerInfo:
        r = _Reader(data, at, path)
        return cls(r("estimator", _STR), r("device", _STR), r("dtype", _STR),
                   r.sub("device_map", PlacementInfo, optional=True),
                   r.sub("context", ContextInfo, optional=True),
                   r("share_prefix", _OPT_BOOL), r("head_split", _OPT_BOOL))

    @classmethod
    def of_scorer(cls, scorer: Mapping, *, estimator: str) -> ScorerInfo:
        """From a scorer's own provenance (``BaseScorer.provenance``)."""
        placed = scorer.get("device_map")
        context = None if "context_token" not in scorer else ContextInfo(
            scorer["context_token"], scorer["context_rule"], bool(scorer["chat_template"]),
            tuple(scorer.get("context_skipped", ())))
        return cls(estimator, str(scorer["device"]), str(scorer["dtype"]),
                   None if placed is None else PlacementInfo(placed["strategy"],
                                                             dict(placed["modules"])),
                   context, scorer.get("share_prefix"), scorer.get("head_split"))


@dataclass(frozen=True)
class TemplatesInfo(_Info):
    """The template set: name, the templates used and the sha256 of every prompt, the set
    file's sha256 and path, its own metadata (open: :attr:`set_provenance`), and for sets
    with bound templates or groups the aggregation and the groups' descriptions."""

    name: str
    n_templates: int
    template_ids: tuple
    prompts_sha256: str
    set_sha256: str | None
    set_path: str | None
    set_provenance: dict
    aggregation: str | None = None
    groups: dict | None = None

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.templates",
                  path: str = "results.json"
                  ) -> TemplatesInfo:
        r = _Reader(data, at, path)
        return cls(r("name", _STR), r("n_templates", _INT), r("template_ids", _STRS),
                   r("prompts_sha256", _STR), r("set_sha256", _OPT_STR),
                   r("set_path", _OPT_STR), r("set_provenance", _OBJ),
                   r("aggregation", _OPT_STR), r("groups", _OPT_STR_MAP))


@dataclass(frozen=True)
class TasksInfo(_Info):
    """The task vocabulary: its name, the words in order and the sha256 of its file."""

    name: str
    words: tuple
    sha256: str | None

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.tasks",
                  path: str = "results.json") -> TasksInfo:
        r = _Reader(data, at, path)
        return cls(r("name", _STR), r("words", _STRS), r("sha256", _OPT_STR))


@dataclass(frozen=True)
class BootstrapInfo(_Info):
    """The bootstrap behind every CI: resamples, confidence, seed, units, base uncertainty,
    the minimum base count, and a one-line description."""

    n_resamples: int
    confidence: float
    seed: int
    resample: str
    base_uncertainty: str
    min_base_count: int | None
    method: str

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.bootstrap",
                  path: str = "results.json"
                  ) -> BootstrapInfo:
        r = _Reader(data, at, path)
        return cls(r("n_resamples", _INT), r("confidence", _NUM), r("seed", _INT),
                   r("resample", _STR), r("base_uncertainty", _STR),
                   r("min_base_count", _OPT_INT), r("method", _STR))


@dataclass(frozen=True)
class BaseRatesInfo(_Info):
    """One base-rate table as a run used it (one source, one direction): the source's own
    provenance (open: :attr:`source`, as the source wrote it), the sha256 of the joint table,
    the attribute marginal P(A), whether the signs were given, and for counts the
    co-occurrences behind each task."""

    source: dict
    joint_sha256: str
    marginal: dict
    association_given: bool
    row_totals: dict | None = None

    # what the reports read of the source's own provenance (keys every source may set)
    @property
    def name(self) -> str:
        return str(self.source.get("name", ""))

    @property
    def kind(self) -> str:
        """``counts``, ``statistics``, ``constructed`` or "" (see ``base_rates.KINDS``)."""
        return str(self.source.get("kind", ""))

    @property
    def about(self) -> str:
        """What the source is: its ``about`` line, else its citation, else its name."""
        return str(self.source.get("about") or self.citation or self.name)

    @property
    def citation(self) -> str:
        return str(self.source.get("citation") or "")

    @property
    def file_sha256(self) -> str:
        """The sha256 of the source's file, else of the joint table the run used."""
        return str(self.source.get("sha256") or self.joint_sha256)

    @property
    def demonstration(self) -> bool:
        return bool(self.source.get("demonstration"))

    @property
    def n_kept(self):
        """The counted sentences of a count-based source (None when not counted)."""
        return self.source.get("n_kept")

    @classmethod
    def from_dict(cls, data, *, at: str = "provenance.base_rates",
                  path: str = "results.json"
                  ) -> BaseRatesInfo:
        r = _Reader(data, at, path)
        return cls(r("source", _OBJ), r("joint_sha256", _STR), r("marginal", _NUM_MAP),
                   r("association_given", _BOOL), r("row_totals", _OPT_NUM_MAP))


@dataclass(frozen=True)
class Provenance(_Info):
    """Everything behind a result's numbers (``ProbeResult.provenance``; ``results.json``
    ``provenance``). ``base_rates`` maps source -> direction -> :class:`BaseRatesInfo`, in
    the order of the run; ``std`` says how the spread over templates is computed."""

    model: ModelInfo
    scorer: ScorerInfo
    seed: int
    compat: str | None
    bootstrap: BootstrapInfo
    std: str
    templates: TemplatesInfo
    tasks: TasksInfo
    attributes: tuple
    base_rates: dict
    design: dict | None
    versions: dict
    platform: str
    note: str | None
    timestamp: str

    def base_rate(self, source: str, direction: str) -> BaseRatesInfo | None:
        """The table of ``source`` in ``direction`` (None when the run had none)."""
        return self.base_rates.get(source, {}).get(direction)

    @classmethod
    def from_dict(cls, data, *, path: str = "results.json") -> Provenance:
        """Read and check a schema-3 ``provenance`` object; one-line errors name ``path``
        and the key's path."""
        r = _Reader(data, "provenance", path)
        bases = r("base_rates", _OBJ)
        base_rates = {}
        for source, by_dir in bases.items():
            rs = _Reader(by_dir, f"provenance.base_rates.{source}", path)
            bad = [d for d in by_dir if d not in DIRECTIONS]
            if bad:
                raise BiasampError(f"{path}: provenance.base_rates.{source} keys must be "
                                   f"directions {list(DIRECTIONS)}; got {bad[0]!r}")
            base_rates[source] = {d: rs.sub(d, BaseRatesInfo) for d in by_dir}
        return cls(r.sub("model", ModelInfo), r.sub("scorer", ScorerInfo), r("seed", _INT),
                   r("compat", _OPT_STR), r.sub("bootstrap", BootstrapInfo), r("std", _STR),
                   r.sub("templates", TemplatesInfo), r.sub("tasks", TasksInfo),
                   r("attributes", _STRS), base_rates, r("design", _OPT_OBJ),
                   r("versions", _STR_MAP), r("platform", _STR), r("note", _OPT_STR),
                   r("timestamp", _STR))

