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
from ._provenance import Provenance

__all__ = ["AGGREGATIONS", "AGREEMENT_COLUMNS", "BY_GROUP_COLUMNS", "BY_PAIR_COLUMNS", "DATA_FILES",
           "PER_TEMPLATE_COLUMNS", "READABLE_VERSIONS", "SCHEMA_VERSION", "SUMMARY_KEYS",
           "TABLE_COLUMNS", "TABLE_FORMATS", "check_complete", "check_schema", "jsonable",
           "provenance_of", "upgrade_v2"]

#: Version of the results.json layout written; bumped when a reader would misread a file.
SCHEMA_VERSION = 3
#: Versions this biasamp reads (a version 2 provenance is converted on reading:
#: :func:`upgrade_v2`).
READABLE_VERSIONS = (2, 3)
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
_BY_PAIR_TYPES = dict.fromkeys(BY_PAIR_COLUMNS, _NUM)
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


def check_schema(data, path: str) -> Provenance:
    """Check a parsed ``results.json`` against the schema; return its typed provenance (read
    once, here: a schema-2 one converted). One-line errors."""
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
    return provenance_of(data, path)


def provenance_of(data: dict, path: str) -> Provenance:
    """The typed provenance of a parsed ``results.json`` of a readable version (schema 2
    converted by :func:`upgrade_v2`); one-line errors naming ``path`` and the key."""
    prov = data["provenance"]
    if data["schema_version"] == 2:
        prov = upgrade_v2(prov)
    return Provenance.from_dict(prov, path=path)


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


def upgrade_v2(prov: dict) -> dict:
    """A schema-2 ``provenance`` in the schema-3 layout (then read by
    :meth:`Provenance.from_dict`): the model fields, kept at the top level and under
    ``scorer``, once under ``model``; ``source|direction`` keys nested; the scorer's context
    fields under ``scorer.context``; keys schema 2 left out as null. Anything that is not an
    object is passed on for ``from_dict`` to refuse."""
    if not isinstance(prov, dict):
        return prov
    sc = prov.get("scorer") if isinstance(prov.get("scorer"), dict) else {}
    model = {"name": prov.get("model"), "model_type": prov.get("model_type", "masked"),
             **{k: sc.get(k) for k in ("model_type_from", "commit", "model_class",
                                       "tokenizer_class")},
             "revision": prov.get("revision"), "weights_sha256": sc.get("weights_sha256", {}),
             "missing_weights": sc.get("missing_weights", [])}
    scorer = {"estimator": prov.get("estimator"), "device": prov.get("device"),
              "dtype": prov.get("dtype"), "device_map": sc.get("device_map"),
              "context": None if "context_token" not in sc else {
                  "token": sc["context_token"], "rule": sc.get("context_rule"),
                  "chat_template": sc.get("chat_template"),
                  "skipped": sc.get("context_skipped", [])},
              "share_prefix": sc.get("share_prefix"), "head_split": sc.get("head_split")}
    templates = prov.get("templates")
    if isinstance(templates, dict):
        templates = {"set_sha256": None, "set_path": None, "set_provenance": {},
                     "aggregation": None, "groups": None, **templates}
    tasks = prov.get("tasks")
    if isinstance(tasks, dict):
        tasks = {"sha256": None, **tasks}
    bases: dict = {}
    flat = prov.get("base_rates") if isinstance(prov.get("base_rates"), dict) else {}
    for key, bp in flat.items():
        source, _, direction = str(key).rpartition("|")  # schema 2's "source|direction"
        if isinstance(bp, dict):
            own = {k: v for k, v in bp.items() if k not in _DERIVED}
            bp = {"source": own, **{k: bp.get(k) for k in _DERIVED}}
        bases.setdefault(source, {})[direction] = bp
    return {**{k: v for k, v in prov.items() if k not in _V2_ONLY},
            "model": model, "scorer": scorer, "templates": templates, "tasks": tasks,
            "base_rates": bases, "design": prov.get("design"), "note": prov.get("note")}


#: keys of a schema-2 base-rate entry that the run derived (the rest are the source's own)
_DERIVED = ("joint_sha256", "marginal", "association_given", "row_totals")
#: top-level keys of schema 2 that schema 3 keeps under ``model`` or ``scorer``
_V2_ONLY = ("revision", "device", "dtype", "model_type", "estimator")
