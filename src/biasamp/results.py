"""The result of a probe, and the one schema of ``results.json`` (written and read here).

:class:`ProbeResult` holds DataFrames, dicts and its typed :class:`Provenance`;
:meth:`ProbeResult.save` writes the data files of a result folder (it renders nothing);
:meth:`ProbeResult.load` reads them back, checking ``results.json`` against the schema first
(a schema-2 file is converted on reading). The pipeline writes with ``save``
and the reports read with ``load``, so there is one definition of the format.

Files of a result folder:

``results.json``
    ``schema_version``, ``summary``, ``by_pair``, ``per_template``, ``by_group``,
    ``sign_agreement``, ``audit``, ``mass``, ``provenance``, ``config`` (NaN is written as
    ``null``), and, written last, ``files`` (every other file of the folder with its
    sha256 and size) and ``complete: true``. The layout is defined in :mod:`biasamp._schema`.
``by_pair.csv``, ``per_template.csv``, ``by_group.csv``
    The same tables as CSV (``by_group.csv`` only when the templates have groups).
``tables.csv`` or ``tables.parquet``
    Long probability tables: ``template_id, direction, task, attribute, prob, log_prob``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import BiasampError, MissingDependencyError
from ._files import json_loads, read_text, sha256_file
from ._output import MARK, OutputFolder
from ._provenance import (BaseRatesInfo, BootstrapInfo, ContextInfo, ModelInfo,
                          PlacementInfo, Provenance, ScorerInfo, TasksInfo, TemplatesInfo)
from ._validation import OneOf, check

from ._schema import (AGGREGATIONS, AGREEMENT_COLUMNS, BY_GROUP_COLUMNS,  # noqa: F401
                      BY_PAIR_COLUMNS, DATA_FILES, PER_TEMPLATE_COLUMNS, READABLE_VERSIONS,
                      SCHEMA_VERSION, SUMMARY_KEYS, TABLE_COLUMNS, TABLE_FORMATS, _BY_PAIR_TYPES,
                      _NUM, check_complete, check_schema, jsonable)

__all__ = ["AGREEMENT_COLUMNS", "BY_GROUP_COLUMNS", "BY_PAIR_COLUMNS", "BaseRatesInfo",
           "BootstrapInfo", "ContextInfo", "DATA_FILES", "ModelInfo", "PER_TEMPLATE_COLUMNS",
           "PlacementInfo", "ProbeResult", "Provenance", "READABLE_VERSIONS", "SCHEMA_VERSION",
           "SUMMARY_KEYS", "ScorerInfo", "TABLE_COLUMNS", "TABLE_FORMATS", "TasksInfo",
           "TemplatesInfo", "jsonable"]


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
    provenance : Provenance
        Everything behind the numbers, read by attribute: ``provenance.model`` (id, type,
        revision, commit, weights' sha256), ``.scorer`` (estimator, device, dtype,
        context), ``.templates``, ``.tasks``, ``.attributes``, ``.bootstrap``,
        ``.base_rates[source][direction]``, ``.design``, ``.versions``, ``.seed``,
        ``.compat``, ``.note``, ``.timestamp`` (see :mod:`biasamp._provenance`).
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
    provenance: Provenance
    config: dict
    by_group: pd.DataFrame | None = None
    sign_agreement: pd.DataFrame | None = None

    def __post_init__(self):
        if not isinstance(self.provenance, Provenance):
            raise TypeError("ProbeResult.provenance must be a biasamp.results.Provenance "
                            "(Provenance.from_dict reads a dict); got "
                            f"{type(self.provenance).__name__}")
        if self.by_group is None:
            self.by_group = pd.DataFrame(columns=list(BY_GROUP_COLUMNS))
        if self.sign_agreement is None:
            self.sign_agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
        defaults = {"aggregation": "templates", "resample": "templates",
                    "base_resampled": False, "base_bias": np.nan, "n_tasks_unsupported": None,
                    "n_tasks_excluded": 0}
        missing = {k: v for k, v in defaults.items() if k not in self.summary.columns}
        if missing:  # a summary built by hand (the reports only need the first keys)
            self.summary = self.summary.assign(**missing)
        # a count or "not measured" (None): nullable integers, written as int or null
        self.summary = self.summary.assign(
            n_tasks_unsupported=self.summary["n_tasks_unsupported"].astype("Int64"))
        if "sign_support" not in self.by_pair.columns:
            self.by_pair = self.by_pair.assign(sign_support=np.nan, sign_supported=None)
        # true, false or "not measured" (null): a nullable boolean, in memory and on reading
        self.by_pair = self.by_pair.assign(
            sign_supported=self.by_pair["sign_supported"].astype("boolean"))

    @property
    def model(self) -> str:
        """The model id or folder the result belongs to."""
        return self.provenance.model.name

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
            "sign_agreement": jsonable(self.sign_agreement.to_dict(orient="records")),
            "audit": jsonable(self.audit.to_dict(orient="records")),
            "mass": jsonable(self.mass),
            "provenance": jsonable(self.provenance.to_dict()),
            "config": jsonable(self.config),
        }

    @classmethod
    def from_json_dict(cls, data: dict, *, path: str = "results.json",
                       tables: pd.DataFrame | None = None) -> ProbeResult:
        """Build a result from the content of ``results.json`` (checked against the schema)."""
        return cls._from_checked(data, check_schema(data, path), tables=tables)

    @classmethod
    def _from_checked(cls, data: dict, provenance: Provenance, *,
                      tables: pd.DataFrame | None) -> ProbeResult:
        """A result from a ``results.json`` content :func:`check_schema` passed, and the typed
        provenance it read."""
        return cls(summary=_frame(data["summary"], SUMMARY_KEYS).astype({"base_bias": float}),
                   by_pair=_frame(data["by_pair"], BY_PAIR_COLUMNS).astype(
                       {c: float for c, k in _BY_PAIR_TYPES.items() if k == _NUM}),
                   per_template=_frame(data["per_template"], PER_TEMPLATE_COLUMNS).astype(
                       {"value": float}),
                   tables=tables, audit=pd.DataFrame(data["audit"]), mass=data["mass"],
                   provenance=provenance, config=data["config"],
                   by_group=_frame(data["by_group"], BY_GROUP_COLUMNS).astype(
                       dict.fromkeys(("mean", "ci_low", "ci_high"), float)),
                   sign_agreement=_frame(data["sign_agreement"], AGREEMENT_COLUMNS).astype(
                       dict.fromkeys(("agreement", "ci_low", "ci_high"), float)))

    def write_files(self, folder: Path, *, tables: str = "csv") -> None:
        """Write the data files (not ``results.json``) into an existing folder."""
        tables = check(tables, OneOf(TABLE_FORMATS), "tables")
        if tables == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise MissingDependencyError(
                    "tables='parquet' needs pyarrow: pip install 'biasamp[parquet]' "
                    "(or pip install pyarrow), or use tables='csv'") from None
        d = Path(folder)
        if self.tables is not None:
            if tables == "parquet":
                self.tables.to_parquet(d / "tables.parquet", index=False)
            else:
                self.tables.to_csv(d / "tables.csv", index=False)
        self.by_pair.to_csv(d / "by_pair.csv", index=False)
        self.per_template.to_csv(d / "per_template.csv", index=False)
        if not self.by_group.empty:
            self.by_group.to_csv(d / "by_group.csv", index=False)

    def finish(self, folder: Path, *, data: dict | None = None, skip=()) -> Path:
        """Write ``results.json`` last: the content (``data``, default this result's), every
        file of the folder with its sha256 and size (but the output mark and the relative
        paths in ``skip``: files biasamp did not write), and the completion mark. A folder
        without the mark is not a result."""
        d = Path(folder)
        leave = {"results.json", MARK, *skip}
        files = {r: {"sha256": sha256_file(p), "bytes": p.stat().st_size}
                 for p in sorted(d.rglob("*"))
                 if p.is_file() and not p.is_symlink()
                 and (r := p.relative_to(d).as_posix()) not in leave
                 and not any(r.startswith(s.rstrip("/") + "/") for s in skip)}
        data = {**(self.to_json_dict() if data is None else data), "files": files,
                "complete": True}
        path = d / "results.json"
        path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path

    def save(self, out: str | os.PathLike, *, tables: str = "csv",
             overwrite: bool = False) -> Path:
        """Write the data files of a result folder (no reports; see :mod:`biasamp.report`).

        The folder is written as one transaction (:class:`biasamp._output.OutputFolder`): a
        non-empty ``out`` is refused unless ``overwrite`` and it holds a probe result biasamp
        wrote and nothing else (it is then replaced as a whole), a second writer is refused,
        and an error or Ctrl-C leaves the previous folder or nothing.

        Parameters
        ----------
        out : path
            Directory (created).
        tables : {"csv", "parquet"}
            Format of the probability tables (parquet needs pyarrow).
        overwrite : bool
            Replace an existing probe result (one biasamp wrote, with no other file).

        Returns
        -------
        pathlib.Path of the directory.
        """
        check(tables, OneOf(TABLE_FORMATS), "tables")
        with OutputFolder(out, kind="probe", overwrite=overwrite) as staging:
            self.write_files(staging, tables=tables)
            self.finish(staging)
        return Path(out)

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
        data = json_loads(read_text(f, "result file"), str(f))
        provenance = check_schema(data, str(f))  # before anything else is read
        check_complete(data, f.parent)
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
        return cls._from_checked(data, provenance, tables=tab)
