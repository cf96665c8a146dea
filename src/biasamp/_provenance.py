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
from dataclasses import MISSING, dataclass, field, fields, is_dataclass

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


def _k(kind, default=MISSING):
    """A field read from JSON as ``kind``: one of the kinds above (checked by
    :class:`_Reader`), a part class (its ``from_dict``, the key required), ``_Null(part)``
    (the part or null) or a function ``(reader, key) -> value``."""
    return field(default=default, metadata={"kind": kind})


@dataclass(frozen=True)
class _Null:
    """A nested part that may be null (the key is still required)."""

    part: type


class _Info:
    """``to_dict``: the fields as JSON-ready values (nested parts as objects, tuples as
    lists); ``from_dict``: every field read and checked by the kind it was declared with
    (:func:`_k`), so each key is named once, beside its field."""

    #: where the part stands in results.json (for messages)
    _AT = "provenance"

    def to_dict(self) -> dict:
        return _json_ready(self)

    @classmethod
    def from_dict(cls, data, *, at: str | None = None, path: str = "results.json"):
        """Read and check this part of a schema-3 ``provenance``; a missing or mistyped key
        is one line naming ``path`` and the key's path."""
        r = _Reader(data, cls._AT if at is None else at, path)
        values = {}
        for f in fields(cls):
            kind = f.metadata["kind"]
            if isinstance(kind, str):
                values[f.name] = r(f.name, kind)
            elif isinstance(kind, _Null):
                values[f.name] = r.sub(f.name, kind.part, optional=True)
            elif isinstance(kind, type):
                values[f.name] = r.sub(f.name, kind)
            else:
                values[f.name] = kind(r, f.name)
        return cls(**values)


@dataclass(frozen=True)
class ModelInfo(_Info):
    """The model: id or folder, type and the evidence for it, revision, commit, the sha256
    of each weight file, classes, and the weights missing from its checkpoint (allowed with
    ``--allow-missing-weights``; empty otherwise)."""

    _AT = "provenance.model"

    name: str = _k(_STR)
    model_type: str = _k(_STR)
    model_type_from: str = _k(_STR)
    revision: str | None = _k(_OPT_STR)
    commit: str | None = _k(_OPT_STR)
    weights_sha256: dict = _k(_STR_MAP)
    model_class: str = _k(_STR)
    tokenizer_class: str = _k(_STR)
    missing_weights: tuple = _k(_STRS, ())

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

    _AT = "provenance.context"

    token: str = _k(_STR)
    rule: str = _k(_STR)
    chat_template: bool = _k(_BOOL)
    skipped: tuple = _k(_STRS, ())


@dataclass(frozen=True)
class PlacementInfo(_Info):
    """An accelerate placement (``--device-map``): the strategy and how many modules each
    device holds."""

    _AT = "provenance.device_map"

    strategy: str = _k(_STR)
    modules: dict = _k(_INT_MAP)


@dataclass(frozen=True)
class ScorerInfo(_Info):
    """How the model was run: estimator (scoring mode), device, dtype, placement, and for a
    causal LM its context token, key/value prefix sharing and LM-head split."""

    _AT = "provenance.scorer"

    estimator: str = _k(_STR)
    device: str = _k(_STR)
    dtype: str = _k(_STR)
    device_map: PlacementInfo | None = _k(_Null(PlacementInfo), None)
    context: ContextInfo | None = _k(_Null(ContextInfo), None)
    share_prefix: bool | None = _k(_OPT_BOOL, None)
    head_split: bool | None = _k(_OPT_BOOL, None)

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

    _AT = "provenance.templates"

    name: str = _k(_STR)
    n_templates: int = _k(_INT)
    template_ids: tuple = _k(_STRS)
    prompts_sha256: str = _k(_STR)
    set_sha256: str | None = _k(_OPT_STR)
    set_path: str | None = _k(_OPT_STR)
    set_provenance: dict = _k(_OBJ)
    aggregation: str | None = _k(_OPT_STR, None)
    groups: dict | None = _k(_OPT_STR_MAP, None)


@dataclass(frozen=True)
class TasksInfo(_Info):
    """The task vocabulary: its name, the words in order and the sha256 of its file."""

    _AT = "provenance.tasks"

    name: str = _k(_STR)
    words: tuple = _k(_STRS)
    sha256: str | None = _k(_OPT_STR)


@dataclass(frozen=True)
class BootstrapInfo(_Info):
    """The bootstrap behind every CI: resamples, confidence, seed, units, base uncertainty,
    the minimum base count, and a one-line description."""

    _AT = "provenance.bootstrap"

    n_resamples: int = _k(_INT)
    confidence: float = _k(_NUM)
    seed: int = _k(_INT)
    resample: str = _k(_STR)
    base_uncertainty: str = _k(_STR)
    min_base_count: int | None = _k(_OPT_INT)
    method: str = _k(_STR)


@dataclass(frozen=True)
class BaseRatesInfo(_Info):
    """One base-rate table as a run used it (one source, one direction): the source's own
    provenance (open: :attr:`source`, as the source wrote it), the sha256 of the joint table,
    the attribute marginal P(A), whether the signs were given, and for counts the
    co-occurrences behind each task."""

    _AT = "provenance.base_rates"

    source: dict = _k(_OBJ)
    joint_sha256: str = _k(_STR)
    marginal: dict = _k(_NUM_MAP)
    association_given: bool = _k(_BOOL)
    row_totals: dict | None = _k(_OPT_NUM_MAP, None)

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


def _read_base_rates(r: _Reader, key: str) -> dict:
    """``base_rates``: source -> direction -> :class:`BaseRatesInfo`, in the run's order."""
    out = {}
    for source, by_dir in r(key, _OBJ).items():
        rs = _Reader(by_dir, f"{r.at}.{key}.{source}", r.path)
        bad = [d for d in by_dir if d not in DIRECTIONS]
        if bad:
            raise BiasampError(f"{r.path}: {r.at}.{key}.{source} keys must be directions "
                               f"{list(DIRECTIONS)}; got {bad[0]!r}")
        out[source] = {d: rs.sub(d, BaseRatesInfo) for d in by_dir}
    return out


@dataclass(frozen=True)
class Provenance(_Info):
    """Everything behind a result's numbers (``ProbeResult.provenance``; ``results.json``
    ``provenance``). ``base_rates`` maps source -> direction -> :class:`BaseRatesInfo`, in
    the order of the run; ``std`` says how the spread over templates is computed."""

    model: ModelInfo = _k(ModelInfo)
    scorer: ScorerInfo = _k(ScorerInfo)
    seed: int = _k(_INT)
    compat: str | None = _k(_OPT_STR)
    bootstrap: BootstrapInfo = _k(BootstrapInfo)
    std: str = _k(_STR)
    templates: TemplatesInfo = _k(TemplatesInfo)
    tasks: TasksInfo = _k(TasksInfo)
    attributes: tuple = _k(_STRS)
    base_rates: dict = _k(_read_base_rates)
    design: dict | None = _k(_OPT_OBJ)
    versions: dict = _k(_STR_MAP)
    platform: str = _k(_STR)
    note: str | None = _k(_OPT_STR)
    timestamp: str = _k(_STR)

    def base_rate(self, source: str, direction: str) -> BaseRatesInfo | None:
        """The table of ``source`` in ``direction`` (None when the run had none)."""
        return self.base_rates.get(source, {}).get(direction)

