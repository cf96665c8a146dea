"""The one schema of ``results.json`` (and of ``pairs.json``'s model and scorer): frozen
pydantic models, whose docstrings describe the keys in docs/results-format.md, and
:func:`parse`. long on purpose: one declaration per key of the file, with its type beside it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pandas import NA as _NA
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ._conventions import DIRECTIONS
from ._errors import BiasampError, shorten

#: Version of the results.json layout written and read; bumped when a reader would misread a
#: file (an older file is re-run, not converted).
SCHEMA_VERSION = 4
#: Values of ``summary[].aggregation``.
AGGREGATIONS = ("templates", "pooled")
#: File formats of the probability tables.
TABLE_FORMATS = ("csv", "parquet")
#: Columns of the long probability tables.
TABLE_COLUMNS = ("template_id", "direction", "task", "attribute", "prob", "log_prob")
#: Data files of a result folder (results.json records their sha256).
DATA_FILES = ("by_pair.csv", "per_template.csv", "by_group.csv", "tables.csv", "tables.parquet")
#: The shipped JSON Schema of results.json.
SCHEMA_FILE = Path(__file__).with_name("results.schema.json")

Str, Int, Bool, Num = StrictStr, StrictInt, StrictBool, StrictFloat
Strs = tuple[StrictStr, ...]
Direction = Literal[DIRECTIONS]

# every number of the records is a probability, a difference of two, a sign or a BiasAmp->
# value (|BiasAmp->| <= 1): a hand-edited 1.7e308 is refused, not plotted into an overflow
_BOUND = 2.0
_VALUE = f"null or a number in [-{_BOUND:g}, {_BOUND:g}]"


def _value(v):
    if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) <= _BOUND):
        return v
    raise PydanticCustomError("value", _VALUE)


#: A number of a record: null (NaN) or in [-2, 2], kept as given.
Value = Annotated[
    float | None,
    PlainValidator(_value),
    WithJsonSchema(
        {"anyOf": [{"type": "number", "minimum": -_BOUND, "maximum": _BOUND}, {"type": "null"}]}
    ),
]


class FileModel(BaseModel):
    """Frozen, no other keys; read from a file (:func:`parse`), every field's key is
    required."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        protected_namespaces=(),
        json_schema_serialization_defaults_required=True,
    )

    #: Keys a file may leave out (the model that holds them checks when they must be there).
    optional_keys: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _every_key(cls, data, info):
        if info.context and isinstance(data, dict):
            missing = [k for k in cls.model_fields if k not in data and k not in cls.optional_keys]
            if missing:
                raise PydanticCustomError(
                    "missing_keys", "lacks the keys {keys}", {"keys": missing}
                )
        return data


class ModelInfo(FileModel):
    """The model: id or folder, type and the evidence for it, revision, commit, the sha256
    of each weight file, classes, and the weights missing from its checkpoint (allowed with
    ``--allow-missing-weights``; empty otherwise)."""

    name: Str
    model_type: Str
    model_type_from: Str
    revision: Str | None
    commit: Str | None
    weights_sha256: dict[str, Str]
    model_class: Str
    tokenizer_class: Str
    missing_weights: Strs = ()

    @classmethod
    def of_scorer(cls, scorer: Mapping, *, name: str) -> ModelInfo:
        """From ``BaseScorer.provenance``; ``name``: the model as the run was asked for it."""
        return cls(
            name=name, **{k: scorer[k] for k in cls.model_fields if k in scorer and k != "name"}
        )


class ContextInfo(FileModel):
    """The token a causal LM reads before each sentence, the rule that chose it, whether the
    tokenizer has a chat template, and the chat markers passed over."""

    token: Str
    rule: Str
    chat_template: Bool
    skipped: Strs = ()


class PlacementInfo(FileModel):
    """An accelerate placement (``--device-map``): the strategy and how many modules each
    device holds."""

    strategy: Str
    modules: dict[str, Int]


class ScorerInfo(FileModel):
    """How the model was run: estimator (scoring mode), device, dtype, placement, and for a
    causal LM its context token, key/value prefix sharing and LM-head split."""

    estimator: Str
    device: Str
    dtype: Str
    device_map: PlacementInfo | None = None
    context: ContextInfo | None = None
    share_prefix: Bool | None = None
    head_split: Bool | None = None

    @classmethod
    def of_scorer(cls, scorer: Mapping, *, estimator: str) -> ScorerInfo:
        """From ``BaseScorer.provenance``."""
        context = None
        if "context_token" in scorer:
            context = ContextInfo(
                token=scorer["context_token"],
                rule=scorer["context_rule"],
                chat_template=bool(scorer["chat_template"]),
                skipped=tuple(scorer.get("context_skipped", ())),
            )
        return cls(
            estimator=estimator,
            device=str(scorer["device"]),
            dtype=str(scorer["dtype"]),
            context=context,
            **{k: scorer.get(k) for k in ("device_map", "share_prefix", "head_split")},
        )


class TemplatesInfo(FileModel):
    """The template set: name, the templates used and the sha256 of every prompt, the set
    file's sha256 and path, its own metadata (open: :attr:`set_provenance`), and for sets
    with bound templates or groups the aggregation and the groups' descriptions."""

    name: Str
    n_templates: Int
    template_ids: Strs
    prompts_sha256: Str
    set_sha256: Str | None
    set_path: Str | None
    set_provenance: dict[str, Any]
    aggregation: Str | None = None
    groups: dict[str, Str] | None = None


class TasksInfo(FileModel):
    """The task vocabulary: its name, the words in order and the sha256 of its file."""

    name: Str
    words: Strs
    sha256: Str | None


class BootstrapInfo(FileModel):
    """The bootstrap behind every CI: resamples, confidence, seed, units, base uncertainty,
    the minimum base count, and a one-line description (the run's only record of these
    options)."""

    n_resamples: Int
    confidence: Num
    seed: Int
    resample: Str
    base_uncertainty: Str
    min_base_count: Int | None
    method: Str


class BaseRatesInfo(FileModel):
    """One base-rate table as a run used it (one source, one direction): the source's own
    provenance (open: :attr:`source`, as the source wrote it), the sha256 of the joint table,
    the attribute marginal P(A), whether the signs were given, and for counts the
    co-occurrences behind each task."""

    source: dict[str, Any]
    joint_sha256: Str
    marginal: dict[str, Num]
    association_given: Bool
    row_totals: dict[str, Num] | None = None

    @property
    def name(self) -> str:
        return str(self.source.get("name", ""))

    @property
    def kind(self) -> str:
        """counts, statistics, constructed or user (``BaseRateTable.provenance``), or ""."""
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


class Provenance(FileModel):
    """Everything behind a result's numbers (``ProbeResult.provenance``; ``results.json``
    ``provenance``). ``base_rates`` maps source -> direction -> :class:`BaseRatesInfo`, in
    the order of the run; ``std`` says how the spread over templates is computed."""

    model: ModelInfo
    scorer: ScorerInfo
    compat: Str | None
    bootstrap: BootstrapInfo
    std: Str
    templates: TemplatesInfo
    tasks: TasksInfo
    attributes: Strs
    base_rates: dict[str, dict[Direction, BaseRatesInfo]]
    design: dict[str, Any] | None
    versions: dict[str, Str]
    platform: Str
    note: Str | None
    timestamp: Str

    @property
    def seed(self) -> int:
        """The seed of the run (the bootstrap's: nothing else draws at random)."""
        return self.bootstrap.seed

    def base_rate(self, source: str, direction: str) -> BaseRatesInfo | None:
        """The table of ``source`` in ``direction`` (None when the run had none)."""
        return self.base_rates.get(source, {}).get(direction)


class SummaryRow(FileModel):
    """One (base_rates, direction): BiasAmp-> over templates with its CI."""

    base_rates: Str
    direction: Direction
    mean: Value
    std: Value
    ci_low: Value
    ci_high: Value
    n_templates: Int
    per_template: list[Value]
    aggregation: Literal[AGGREGATIONS]
    resample: Str
    base_resampled: Bool
    base_bias: Value
    n_tasks_unsupported: Int | None
    n_tasks_excluded: Int


class ByPairRow(FileModel):
    """One (base_rates, direction, task, attribute) with bootstrap CIs."""

    base_rates: Str
    direction: Direction
    task: Str
    attribute: Str
    association: Value
    p_base: Value
    p_model: Value
    p_model_std: Value
    delta: Value
    delta_ci_low: Value
    delta_ci_high: Value
    contribution: Value
    contribution_ci_low: Value
    contribution_ci_high: Value
    n_templates: Int
    sign_support: Value
    sign_supported: Bool | None


class PerTemplateRow(FileModel):
    """BiasAmp-> of one (base_rates, direction, template)."""

    base_rates: Str
    direction: Direction
    template_id: Str
    value: Value
    n_ties: Int
    n_nan: Int


class ByGroupRow(FileModel):
    """BiasAmp-> of one (base_rates, direction, group of templates)."""

    base_rates: Str
    direction: Direction
    group: Str
    mean: Value
    ci_low: Value
    ci_high: Value
    n_templates: Int
    n_tasks: Int


class AgreementRow(FileModel):
    """The sign agreement of two sources' associations in one direction."""

    direction: Direction
    source_a: Str
    source_b: Str
    agreement: Value
    ci_low: Value
    ci_high: Value
    n_cells: Int


class ResultsFile(FileModel):
    """``results.json``: the records, the typed provenance, the run's other options, the
    sha256 of the data files beside it and, written last, the completion mark."""

    schema_version: Literal[SCHEMA_VERSION]
    summary: list[SummaryRow] = Field(min_length=1)
    by_pair: list[ByPairRow]
    per_template: list[PerTemplateRow]
    by_group: list[ByGroupRow]
    sign_agreement: list[AgreementRow]
    audit: list[dict[str, Any]]
    mass: dict[str, Any]
    provenance: Provenance
    config: dict[str, Any]
    data_sha256: dict[Literal[DATA_FILES], Str]
    complete: Literal[True]


#: Columns of each record, from its model.
SUMMARY_KEYS = tuple(SummaryRow.model_fields)
BY_PAIR_COLUMNS = tuple(ByPairRow.model_fields)
PER_TEMPLATE_COLUMNS = tuple(PerTemplateRow.model_fields)
BY_GROUP_COLUMNS = tuple(ByGroupRow.model_fields)
AGREEMENT_COLUMNS = tuple(AgreementRow.model_fields)


_KINDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "dict_type": "an object",
    "model_type": "an object",
    "list_type": "a list",
    "tuple_type": "a list",
}


def _where(loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def _one_line(err: dict, name: str) -> str:
    """One pydantic error as the house's line: the key's path, what it must be, the value."""
    loc, kind, keys = list(err["loc"]), err["type"], ""
    if loc and loc[-1] == "[key]":  # a key of an object: named by the object
        loc, keys = loc[:-2], " keys"
    where = (_where(loc) or name) + keys
    if kind == "missing_keys":
        return f"{where} lacks the keys {err['ctx']['keys']}"
    if kind == "extra_forbidden":
        return f"{where} is not a key of this biasamp's layout"
    if kind == "too_short":
        return f"{where} is empty"
    if kind == "literal_error":
        expected = "one of " + err["ctx"]["expected"].replace(" or ", ", ")
    else:
        expected = _KINDS.get(kind, err["msg"])
    return f"{where} must be {expected}; got {shorten(repr(err['input']), 60)}"


def parse(model: type[FileModel], data, path: str, name: str = "results.json"):
    """``data`` (a parsed file) checked against ``model``; the first error as one line."""
    try:
        return model.model_validate(data, context={"file": path})
    except ValidationError as exc:
        raise BiasampError(f"{path}: {_one_line(exc.errors(include_url=False)[0], name)}") from None


def check_version(data, path: str, *, version: int, name: str, again: str) -> None:
    """Refuse a parsed file that is not an object or of another ``version`` (re-run it)."""
    if not isinstance(data, dict):
        raise BiasampError(f"{path}: {name} must hold a JSON object; got {type(data).__name__}")
    if data.get("schema_version") != version:
        raise BiasampError(
            f"{path}: schema_version {data.get('schema_version')!r} is not "
            f"supported (this biasamp reads {version}): the folder was written "
            f"by another biasamp version; run {again} again"
        )


def jsonable(obj):
    """A JSON-serialisable copy: numpy scalars to Python, NaN/inf to None, paths to str."""
    if isinstance(obj, (np.bool_, np.number)):
        obj = obj.item()
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, (str, int)) or obj is None:  # bool is an int
        return obj
    return None if obj is _NA else str(obj)  # NA: a missing value of a nullable column


def results_schema() -> dict:
    """The JSON Schema of ``results.json`` (what :data:`SCHEMA_FILE` ships)."""
    return ResultsFile.model_json_schema(mode="serialization")


if __name__ == "__main__":  # python -m biasamp._schema: write the shipped schema again
    SCHEMA_FILE.write_text(json.dumps(results_schema(), indent=1) + "\n", encoding="utf-8")
