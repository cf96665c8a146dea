"""The result of a probe, and the one schema of ``results.json`` (written and read here).

:class:`ProbeResult` holds DataFrames and dicts; :meth:`ProbeResult.save` writes the data
files of a result folder (it renders nothing); :meth:`ProbeResult.load` reads them back,
checking ``results.json`` against :data:`SCHEMA` first. The pipeline writes with ``save``
and the reports read with ``load``, so there is one definition of the format.

Files of a result folder:

``results.json``
    ``schema_version``, ``summary``, ``by_pair``, ``per_template``, ``by_group``,
    ``audit``, ``mass``, ``provenance``, ``config`` (NaN is written as ``null``).
``by_pair.csv``, ``per_template.csv``, ``by_group.csv``
    The same tables as CSV (``by_group.csv`` only when the templates have groups).

Schema versions: 2 added ``summary[].aggregation`` (``"templates"``: the mean over
templates; ``"pooled"``: BiasAmp-> of the tables pooled per task, for templates bound to
their own tasks) and ``by_group``. Version 1 files are still read (``aggregation`` is then
``"templates"``, the only kind they hold, and ``by_group`` is empty); a version 1 reader
refuses version 2 files, which could hold pooled values it would take for means over
templates.
``tables.csv`` or ``tables.parquet``
    Long probability tables: ``template_id, direction, task, attribute, prob, log_prob``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._conventions import DIRECTIONS
from ._errors import BiasampError, MissingDependencyError
from ._validation import OneOf, check

__all__ = ["BY_GROUP_COLUMNS", "BY_PAIR_COLUMNS", "PER_TEMPLATE_COLUMNS", "ProbeResult",
           "READABLE_VERSIONS", "SCHEMA_VERSION", "SUMMARY_KEYS", "TABLE_COLUMNS",
           "TABLE_FORMATS", "jsonable"]

#: Version of the results.json layout written; bumped when a reader would misread a file.
SCHEMA_VERSION = 2
#: Versions this biasamp reads.
READABLE_VERSIONS = (1, 2)
#: Values of ``summary[].aggregation``.
AGGREGATIONS = ("templates", "pooled")

#: Keys of each record of ``summary``.
SUMMARY_KEYS = ("base_rates", "direction", "mean", "std", "ci_low", "ci_high", "n_templates",
                "per_template", "aggregation")
#: Columns of ``by_group`` (one row per source, direction and group of templates).
BY_GROUP_COLUMNS = ("base_rates", "direction", "group", "mean", "ci_low", "ci_high",
                    "n_templates", "n_tasks")
#: Columns of ``by_pair`` (one row per source, direction, task, attribute).
BY_PAIR_COLUMNS = ("base_rates", "direction", "task", "attribute", "association", "p_base",
                   "p_model", "p_model_std", "delta", "delta_ci_low", "delta_ci_high",
                   "contribution", "contribution_ci_low", "contribution_ci_high", "n_templates")
#: Columns of ``per_template``.
PER_TEMPLATE_COLUMNS = ("base_rates", "direction", "template_id", "value", "n_ties", "n_nan")
#: Columns of the long probability tables.
TABLE_COLUMNS = ("template_id", "direction", "task", "attribute", "prob", "log_prob")
#: File formats of the probability tables.
TABLE_FORMATS = ("csv", "parquet")

_STR, _NUM, _INT, _LIST = "a string", "a number", "an integer", "a list"
_SUMMARY_TYPES = {"base_rates": _STR, "direction": _STR, "mean": _NUM, "std": _NUM,
                  "ci_low": _NUM, "ci_high": _NUM, "n_templates": _INT, "per_template": _LIST,
                  "aggregation": _STR}
_BY_GROUP_TYPES = {"base_rates": _STR, "direction": _STR, "group": _STR, "mean": _NUM,
                   "ci_low": _NUM, "ci_high": _NUM, "n_templates": _INT, "n_tasks": _INT}
_BY_PAIR_TYPES = {c: _NUM for c in BY_PAIR_COLUMNS}
_BY_PAIR_TYPES.update(base_rates=_STR, direction=_STR, task=_STR, attribute=_STR,
                      n_templates=_INT)
_PER_TEMPLATE_TYPES = {"base_rates": _STR, "direction": _STR, "template_id": _STR,
                       "value": _NUM, "n_ties": _INT, "n_nan": _INT}
_TOP_KEYS = ("schema_version", "summary", "by_pair", "per_template", "audit", "mass",
             "provenance", "config")


def jsonable(obj):
    """A JSON-serialisable copy: numpy scalars to Python, NaN/inf to None, paths to str."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, (str, int)) or obj is None:
        return obj
    return str(obj)


def _type_ok(value, kind: str) -> bool:
    if kind == _STR:
        return isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _NUM:
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    if kind == _LIST:
        return isinstance(value, list)
    return True  # pragma: no cover


def _check_records(records, types: dict, where: str, path: str) -> None:
    if not isinstance(records, list):
        raise BiasampError(f"{path}: {where} must be a list of records; got "
                           f"{type(records).__name__}")
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise BiasampError(f"{path}: {where}[{i}] must be an object; got "
                               f"{type(rec).__name__}")
        missing = [k for k in types if k not in rec]
        if missing:
            raise BiasampError(f"{path}: {where}[{i}] lacks the keys {missing}")
        for k, kind in types.items():
            if not _type_ok(rec[k], kind):
                raise BiasampError(f"{path}: {where}[{i}].{k} must be {kind}; got {rec[k]!r}")
        if "direction" in types and rec["direction"] not in DIRECTIONS:
            raise BiasampError(f"{path}: {where}[{i}].direction must be one of "
                               f"{list(DIRECTIONS)}; got {rec['direction']!r}")


def check_schema(data, path: str) -> dict:
    """Check a parsed ``results.json`` against the schema; return it. One-line errors."""
    if not isinstance(data, dict):
        raise BiasampError(f"{path}: results.json must hold a JSON object; got "
                           f"{type(data).__name__}")
    version = data.get("schema_version")
    if version is None:
        raise BiasampError(f"{path}: no schema_version (written by biasamp 0.1 or not a biasamp "
                           f"result); re-run `biasamp probe`")
    if version not in READABLE_VERSIONS:
        raise BiasampError(f"{path}: schema_version {version!r} is not supported (this biasamp "
                           f"reads {', '.join(map(str, READABLE_VERSIONS))}); use the biasamp "
                           "version that wrote it")
    missing = [k for k in _TOP_KEYS + (("by_group",) if version >= 2 else ()) if k not in data]
    if missing:
        raise BiasampError(f"{path}: results.json lacks the keys {missing}")
    types = _SUMMARY_TYPES if version >= 2 else {k: v for k, v in _SUMMARY_TYPES.items()
                                                 if k != "aggregation"}
    _check_records(data["summary"], types, "summary", path)
    if not data["summary"]:
        raise BiasampError(f"{path}: summary is empty")
    for i, rec in enumerate(data["summary"]):
        if rec.get("aggregation", "templates") not in AGGREGATIONS:
            raise BiasampError(f"{path}: summary[{i}].aggregation must be one of "
                               f"{list(AGGREGATIONS)}; got {rec['aggregation']!r}")
    _check_records(data["by_pair"], _BY_PAIR_TYPES, "by_pair", path)
    _check_records(data["per_template"], _PER_TEMPLATE_TYPES, "per_template", path)
    _check_records(data.get("by_group", []), _BY_GROUP_TYPES, "by_group", path)
    if not isinstance(data["audit"], list):
        raise BiasampError(f"{path}: audit must be a list of records")
    for key in ("mass", "provenance", "config"):
        if not isinstance(data[key], dict):
            raise BiasampError(f"{path}: {key} must be an object; got "
                               f"{type(data[key]).__name__}")
    return data


def _frame(records, columns: Sequence[str]) -> pd.DataFrame:
    df = pd.DataFrame(records, columns=list(columns)) if records else pd.DataFrame(
        columns=list(columns))
    return df


@dataclass
class ProbeResult:
    """The result of probing one model.

    Attributes
    ----------
    summary : DataFrame
        One row per (base_rates, direction); columns :data:`SUMMARY_KEYS`.
    by_pair : DataFrame
        Per (base_rates, direction, task, attribute) disaggregation with bootstrap CIs;
        columns :data:`BY_PAIR_COLUMNS`.
    per_template : DataFrame
        BiasAmp-> per (base_rates, direction, template); :data:`PER_TEMPLATE_COLUMNS`.
        Pooled T->A rows (templates bound to their own tasks) have no value (NaN).
    tables : DataFrame or None
        Long probability tables (:data:`TABLE_COLUMNS`); None when loaded without them.
    audit : DataFrame
        How every candidate tokenises for the model.
    mass : dict
        Raw candidate probability mass summarised per direction.
    provenance : dict
        Versions, model, device, dtype, seed, estimator, hashes, timestamp.
    config : dict
        The resolved configuration.
    by_group : DataFrame
        BiasAmp-> per (base_rates, direction, group of templates), e.g. WinoBias' pro and
        anti sentences; :data:`BY_GROUP_COLUMNS`; empty when the templates have no groups.
    """

    summary: pd.DataFrame
    by_pair: pd.DataFrame
    per_template: pd.DataFrame
    tables: pd.DataFrame | None
    audit: pd.DataFrame
    mass: dict
    provenance: dict
    config: dict
    by_group: pd.DataFrame | None = None

    def __post_init__(self):
        if self.by_group is None:
            self.by_group = pd.DataFrame(columns=list(BY_GROUP_COLUMNS))
        if "aggregation" not in self.summary.columns:
            self.summary = self.summary.assign(aggregation="templates")

    @property
    def model(self) -> str:
        """The model id or folder the result belongs to."""
        return str(self.provenance.get("model", ""))

    def to_json_dict(self) -> dict:
        """The content of ``results.json``."""
        summary = [{k: jsonable(rec[k]) for k in SUMMARY_KEYS}
                   for rec in self.summary.to_dict(orient="records")]
        return {
            "schema_version": SCHEMA_VERSION,
            "summary": summary,
            "by_pair": jsonable(self.by_pair.to_dict(orient="records")),
            "per_template": jsonable(self.per_template.to_dict(orient="records")),
            "by_group": jsonable(self.by_group.to_dict(orient="records")),
            "audit": jsonable(self.audit.to_dict(orient="records")),
            "mass": jsonable(self.mass),
            "provenance": jsonable(self.provenance),
            "config": jsonable(self.config),
        }

    @classmethod
    def from_json_dict(cls, data: dict, *, path: str = "results.json",
                       tables: pd.DataFrame | None = None) -> ProbeResult:
        """Build a result from the content of ``results.json`` (checked against the schema)."""
        check_schema(data, path)
        summary = [{"aggregation": "templates", **rec} for rec in data["summary"]]
        return cls(summary=_frame(summary, SUMMARY_KEYS),
                   by_pair=_frame(data["by_pair"], BY_PAIR_COLUMNS).astype(
                       {c: float for c, k in _BY_PAIR_TYPES.items() if k == _NUM}),
                   per_template=_frame(data["per_template"], PER_TEMPLATE_COLUMNS).astype(
                       {"value": float}),
                   tables=tables, audit=pd.DataFrame(data["audit"]), mass=data["mass"],
                   provenance=data["provenance"], config=data["config"],
                   by_group=_frame(data.get("by_group", []), BY_GROUP_COLUMNS).astype(
                       {c: float for c in ("mean", "ci_low", "ci_high")}))

    def save(self, out: str | os.PathLike, *, tables: str = "csv") -> Path:
        """Write the data files of a result folder (no reports; see :mod:`biasamp.report`).

        Parameters
        ----------
        out : path
            Directory (created).
        tables : {"csv", "parquet"}
            Format of the probability tables (parquet needs pyarrow).

        Returns
        -------
        pathlib.Path of the directory.
        """
        tables = check(tables, OneOf(TABLE_FORMATS), "tables")
        if tables == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise MissingDependencyError(
                    "tables='parquet' needs pyarrow: pip install 'biasamp[parquet]' "
                    "(or pip install pyarrow), or use tables='csv'") from None
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        if self.tables is not None:
            if tables == "parquet":
                self.tables.to_parquet(d / "tables.parquet", index=False)
            else:
                self.tables.to_csv(d / "tables.csv", index=False)
        self.by_pair.to_csv(d / "by_pair.csv", index=False)
        self.per_template.to_csv(d / "per_template.csv", index=False)
        if not self.by_group.empty:
            self.by_group.to_csv(d / "by_group.csv", index=False)
        (d / "results.json").write_text(json.dumps(self.to_json_dict(), indent=2,
                                                   allow_nan=False) + "\n", encoding="utf-8")
        return d

    @classmethod
    def load(cls, path: str | os.PathLike, *, tables: bool = True) -> ProbeResult:
        """Read a result folder (or its ``results.json``).

        Parameters
        ----------
        path : path
            The folder written by :meth:`save`, or its ``results.json``.
        tables : bool
            Also read the probability tables (``tables.csv`` or ``tables.parquet``); False
            leaves ``tables`` None (reports do not need them).
        """
        p = Path(path)
        f = p / "results.json" if p.is_dir() else p
        if not f.is_file():
            raise BiasampError(f"result directory {str(path)!r} has no results.json (run "
                               "`biasamp probe --out DIR` first)")
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BiasampError(f"{str(f)!r} is not valid JSON: {exc}") from None
        check_schema(data, str(f))  # before anything else is read
        tab = None
        if tables:
            d = f.parent
            if (d / "tables.parquet").is_file():
                tab = pd.read_parquet(d / "tables.parquet")
            elif (d / "tables.csv").is_file():
                tab = pd.read_csv(d / "tables.csv", dtype={"template_id": str, "task": str,
                                                           "attribute": str})
            else:
                raise BiasampError(f"result directory {str(d)!r} has no tables.csv or "
                                   "tables.parquet (load with tables=False to skip them)")
        return cls.from_json_dict(data, path=str(f), tables=tab)
