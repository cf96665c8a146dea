"""The result of a probe: :class:`ProbeResult`, its data files written (``save``) and read
back (``load``, ``results.json`` checked against :mod:`biasamp._schema` first); the files of a
result folder are listed in docs/reports.md, every key in docs/results-format.md."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pandas as pd

from ._errors import BiasampError, MissingDependencyError
from ._files import json_loads, read_text, sha256_file
from ._output import OutputFolder
from ._schema import (
    AGREEMENT_COLUMNS,
    BY_GROUP_COLUMNS,
    DATA_FILES,
    SCHEMA_VERSION,
    SUMMARY_KEYS,
    TABLE_FORMATS,
    Provenance,
    ResultsFile,
    check_version,
    jsonable,
    parse,
)
from ._validation import OneOf, check

__all__ = ["SCHEMA_VERSION", "ProbeResult", "Provenance"]


#: The records of results.json, each a frame of a :class:`ProbeResult`.
_RECORDS = ("summary", "by_pair", "per_template", "by_group", "sign_agreement")


def _frame(file: ResultsFile, name: str) -> pd.DataFrame:
    """The validated records ``name`` of ``file`` as a frame; their numbers (null: NaN) as
    floats."""
    fields = get_args(ResultsFile.model_fields[name].annotation)[0].model_fields
    df = pd.DataFrame([r.model_dump() for r in getattr(file, name)], columns=list(fields))
    return df.astype({c: float for c, f in fields.items() if f.annotation == (float | None)})


@dataclass
class ProbeResult:
    """The result of probing one model.

    Attributes
    ----------
    summary : DataFrame
        One row per (base_rates, direction); columns :data:`SUMMARY_KEYS`.
    by_pair : DataFrame
        Per (base_rates, direction, task, attribute), with bootstrap CIs.
    per_template : DataFrame
        BiasAmp-> per (base_rates, direction, template); NaN for pooled T->A rows.
    tables : DataFrame or None
        Long probability tables (:data:`biasamp._schema.TABLE_COLUMNS`); None when loaded without them.
    audit : DataFrame
        How every candidate tokenises for the model.
    mass : dict
        Raw candidate probability mass summarised per direction.
    provenance : Provenance
        Everything behind the numbers, read by attribute (``provenance.model.name``, ...).
    config : dict
        The resolved configuration (its bootstrap options are ``provenance.bootstrap``).
    by_group : DataFrame
        BiasAmp-> per (base_rates, direction, group of templates); empty without groups.
    sign_agreement : DataFrame
        The sign agreement of two sources' associations, per direction.
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
            raise TypeError(
                "ProbeResult.provenance must be a biasamp.results.Provenance "
                "(Provenance.model_validate reads a dict); got "
                f"{type(self.provenance).__name__}"
            )
        if self.by_group is None:
            self.by_group = pd.DataFrame(columns=list(BY_GROUP_COLUMNS))
        if self.sign_agreement is None:
            self.sign_agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
        # a count, or true / false, or "not measured" (null): nullable, in memory and on reading
        self.summary = self.summary.astype({"n_tasks_unsupported": "Int64"})
        self.by_pair = self.by_pair.astype({"sign_supported": "boolean"})

    @property
    def model(self) -> str:
        """The model id or folder the result belongs to."""
        return self.provenance.model.name

    def to_json_dict(self) -> dict:
        """The content of ``results.json`` (but the data files' sha256 and the completion
        mark, written by :meth:`finish`)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "summary": jsonable(self.summary[list(SUMMARY_KEYS)].to_dict(orient="records")),
            **{
                k: jsonable(getattr(self, k).to_dict(orient="records"))
                for k in (*_RECORDS[1:], "audit")
            },
            "mass": jsonable(self.mass),
            "provenance": jsonable(self.provenance.model_dump(mode="json")),
            "config": jsonable(self.config),
        }

    def write_files(self, folder: Path, *, tables: str = "csv") -> None:
        """Write the data files (not ``results.json``) into an existing folder."""
        if tables == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise MissingDependencyError(
                    "tables='parquet' needs pyarrow: pip install 'biasamp[parquet]' "
                    "(or pip install pyarrow), or use tables='csv'"
                ) from None
        d = Path(folder)
        if self.tables is not None:  # to_csv or to_parquet
            getattr(self.tables, f"to_{tables}")(d / f"tables.{tables}", index=False)
        self.by_pair.to_csv(d / "by_pair.csv", index=False)
        self.per_template.to_csv(d / "per_template.csv", index=False)
        if not self.by_group.empty:
            self.by_group.to_csv(d / "by_group.csv", index=False)

    def finish(self, folder: Path) -> Path:
        """Write ``results.json`` last: this result, the sha256 of each data file in
        ``folder``, and the completion mark. A folder without the mark is not a result."""
        d = Path(folder)
        data = {
            **self.to_json_dict(),
            "data_sha256": {n: sha256_file(d / n) for n in DATA_FILES if (d / n).is_file()},
            "complete": True,
        }
        path = d / "results.json"
        path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path

    def save(self, out: str | os.PathLike, *, tables: str = "csv", overwrite: bool = False) -> Path:
        """Write the data files of a result folder (no reports; see :mod:`biasamp.report`), as
        one transaction (docs/reports.md: what biasamp writes, and what it never touches).

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
            raise BiasampError(
                f"result directory {str(path)!r} has no results.json (run "
                "`biasamp probe --out DIR` first)"
            )
        data = json_loads(read_text(f, "result file"), str(f))
        check_version(
            data, str(f), version=SCHEMA_VERSION, name="results.json", again="`biasamp probe`"
        )
        if data.get("complete") is not True:
            raise BiasampError(
                f"{str(f.parent)!r} holds no complete result (results.json has no completion "
                "mark: the run that wrote it did not finish); run `biasamp probe` again"
            )
        file = parse(ResultsFile, data, str(f))  # before anything else is read
        for name, digest in file.data_sha256.items():
            if (f.parent / name).is_file() and sha256_file(f.parent / name) != digest:
                raise BiasampError(
                    f"{str(f.parent)!r} is not a complete result: {name} was changed after "
                    "the run (its sha256 differs from results.json)"
                )
        tab = None
        if tables:
            d = f.parent
            if (d / "tables.parquet").is_file():
                tab = pd.read_parquet(d / "tables.parquet")
            elif (d / "tables.csv").is_file():
                tab = pd.read_csv(
                    d / "tables.csv", dtype={"template_id": str, "task": str, "attribute": str}
                )
            else:
                raise BiasampError(
                    f"result directory {str(d)!r} has no tables.csv or "
                    "tables.parquet (load with tables=False to skip them)"
                )
        return cls(
            **{name: _frame(file, name) for name in _RECORDS},
            tables=tab,
            audit=pd.DataFrame(file.audit),
            mass=file.mass,
            provenance=file.provenance,
            config=file.config,
        )
