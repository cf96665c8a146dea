"""The one schema of ``results.json``: its version, record layouts and checks.

:mod:`biasamp.results` writes and reads result folders with it; nothing else defines the
layout (see that module for the files of a folder).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from pandas import NA as _NA

from ._conventions import DIRECTIONS
from ._errors import BiasampError
from ._files import sha256_file

__all__ = ["AGGREGATIONS", "AGREEMENT_COLUMNS", "BY_GROUP_COLUMNS", "BY_PAIR_COLUMNS", "DATA_FILES",
           "PER_TEMPLATE_COLUMNS", "READABLE_VERSIONS", "SCHEMA_VERSION", "SUMMARY_KEYS",
           "TABLE_COLUMNS", "TABLE_FORMATS", "check_complete", "check_schema", "jsonable"]

#: Version of the results.json layout written; bumped when a reader would misread a file.
SCHEMA_VERSION = 2
#: Versions this biasamp reads.
READABLE_VERSIONS = (2,)
#: Values of ``summary[].aggregation``.
AGGREGATIONS = ("templates", "pooled")

#: Keys of each record of ``summary``.
SUMMARY_KEYS = ("base_rates", "direction", "mean", "std", "ci_low", "ci_high", "n_templates",
                "per_template", "aggregation", "resample", "base_resampled", "base_bias",
                "n_tasks_unsupported", "n_tasks_excluded")
#: Columns of ``by_group`` (one row per source, direction and group of templates).
BY_GROUP_COLUMNS = ("base_rates", "direction", "group", "mean", "ci_low", "ci_high",
                    "n_templates", "n_tasks")
#: Columns of ``by_pair`` (one row per source, direction, task, attribute).
BY_PAIR_COLUMNS = ("base_rates", "direction", "task", "attribute", "association", "p_base",
                   "p_model", "p_model_std", "delta", "delta_ci_low", "delta_ci_high",
                   "contribution", "contribution_ci_low", "contribution_ci_high", "n_templates",
                   "sign_support", "sign_supported")
#: Columns of ``sign_agreement`` (one row per direction and pair of sources).
AGREEMENT_COLUMNS = ("direction", "source_a", "source_b", "agreement", "ci_low", "ci_high",
                     "n_cells")
#: Columns of ``per_template``.
PER_TEMPLATE_COLUMNS = ("base_rates", "direction", "template_id", "value", "n_ties", "n_nan")
#: Columns of the long probability tables.
TABLE_COLUMNS = ("template_id", "direction", "task", "attribute", "prob", "log_prob")
#: File formats of the probability tables.
TABLE_FORMATS = ("csv", "parquet")
#: Data files of a result folder (results.json lists them with their sha256).
DATA_FILES = ("by_pair.csv", "per_template.csv", "by_group.csv", "tables.csv", "tables.parquet")

# every number of the records is a probability, a difference of two, a sign or a BiasAmp->
# value (|BiasAmp->| <= 1): a hand-edited 1.7e308 is refused, not plotted into an overflow
_NUM_BOUND = 2.0
_STR, _INT, _LIST = "a string", "an integer", "a list"
_NUM = f"null or a number in [-{_NUM_BOUND:g}, {_NUM_BOUND:g}]"
_BOOL, _OPT_BOOL, _OPT_INT = "true or false", "true, false or null", "an integer or null"
_SUMMARY_TYPES = {"base_rates": _STR, "direction": _STR, "mean": _NUM, "std": _NUM,
                  "ci_low": _NUM, "ci_high": _NUM, "n_templates": _INT, "per_template": _LIST,
                  "aggregation": _STR, "resample": _STR, "base_resampled": _BOOL,
                  "base_bias": _NUM,
                  "n_tasks_unsupported": _OPT_INT, "n_tasks_excluded": _INT}
_BY_GROUP_TYPES = {"base_rates": _STR, "direction": _STR, "group": _STR, "mean": _NUM,
                   "ci_low": _NUM, "ci_high": _NUM, "n_templates": _INT, "n_tasks": _INT}
_BY_PAIR_TYPES = {c: _NUM for c in BY_PAIR_COLUMNS}
_BY_PAIR_TYPES.update(base_rates=_STR, direction=_STR, task=_STR, attribute=_STR,
                      n_templates=_INT, sign_supported=_OPT_BOOL)
_AGREEMENT_TYPES = {"direction": _STR, "source_a": _STR, "source_b": _STR, "agreement": _NUM,
                    "ci_low": _NUM, "ci_high": _NUM, "n_cells": _INT}
_PER_TEMPLATE_TYPES = {"base_rates": _STR, "direction": _STR, "template_id": _STR,
                       "value": _NUM, "n_ties": _INT, "n_nan": _INT}
_TOP_KEYS = ("schema_version", "summary", "by_pair", "per_template", "by_group",
             "sign_agreement", "audit", "mass", "provenance", "config")


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
    if obj is _NA:  # a missing value of a nullable pandas column (e.g. Int64)
        return None
    return str(obj)


def _type_ok(value, kind: str) -> bool:
    if kind == _STR:
        return isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _NUM:
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                 and abs(value) <= _NUM_BOUND)
    if kind == _LIST:
        return isinstance(value, list)
    if kind in (_BOOL, _OPT_BOOL):
        return isinstance(value, bool) or (kind == _OPT_BOOL and value is None)
    if kind == _OPT_INT:
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
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
    missing = [k for k in _TOP_KEYS if k not in data]
    if missing:
        raise BiasampError(f"{path}: results.json lacks the keys {missing}")
    _check_records(data["summary"], _SUMMARY_TYPES, "summary", path)
    if not data["summary"]:
        raise BiasampError(f"{path}: summary is empty")
    for i, rec in enumerate(data["summary"]):
        bad = [v for v in rec["per_template"] if not _type_ok(v, _NUM)]
        if bad:
            raise BiasampError(f"{path}: summary[{i}].per_template must hold {_NUM}; got "
                               f"{bad[0]!r}")
        if rec.get("aggregation", "templates") not in AGGREGATIONS:
            raise BiasampError(f"{path}: summary[{i}].aggregation must be one of "
                               f"{list(AGGREGATIONS)}; got {rec['aggregation']!r}")
    _check_records(data["by_pair"], _BY_PAIR_TYPES, "by_pair", path)
    _check_records(data["per_template"], _PER_TEMPLATE_TYPES, "per_template", path)
    _check_records(data["by_group"], _BY_GROUP_TYPES, "by_group", path)
    _check_records(data["sign_agreement"], _AGREEMENT_TYPES, "sign_agreement", path)
    if not isinstance(data["audit"], list):
        raise BiasampError(f"{path}: audit must be a list of records")
    for key in ("mass", "provenance", "config"):
        if not isinstance(data[key], dict):
            raise BiasampError(f"{path}: {key} must be an object; got "
                               f"{type(data[key]).__name__}")
    return data


def check_complete(data: dict, folder: Path) -> None:
    """A result is complete: ``results.json`` carries the completion mark, and every data file
    it lists that is in the folder has the recorded sha256 (a file of another run is refused;
    a data file left out on purpose, e.g. the tables, is not needed by reports; reports and
    plots may be redrawn)."""
    if data.get("complete") is not True or not isinstance(data.get("files"), dict):
        raise BiasampError(f"{str(folder)!r} holds no complete result (results.json has no "
                           "completion mark: the run that wrote it did not finish); run "
                           "`biasamp probe` again")
    for name, entry in data["files"].items():
        if not name.startswith(DATA_FILES):
            continue
        path = folder / name
        if not path.is_file():
            continue
        if not isinstance(entry, dict) or sha256_file(path) != entry.get("sha256"):
            raise BiasampError(f"{str(folder)!r} is not a complete result: {name} was changed "
                               "after the run (its sha256 differs from results.json)")
