"""The result of a probe, written and read here (the layout: :mod:`biasamp._schema`).

:class:`ProbeResult` holds DataFrames, dicts and its typed :class:`Provenance`;
:meth:`ProbeResult.save` writes the data files of a result folder (it renders nothing);
:meth:`ProbeResult.load` reads them back, checking ``results.json`` against the schema first.
The pipeline writes with ``save`` and the reports read with ``load``, so there is one
definition of the format.

Files of a result folder (the folder's mark ``.biasamp.json`` lists them all):

``results.json``
    ``schema_version``, ``summary``, ``by_pair``, ``per_template``, ``by_group``,
    ``sign_agreement``, ``audit``, ``mass``, ``provenance``, ``config`` (NaN is written as
    ``null``), and, written last, ``data_sha256`` (the sha256 of each data file) and
    ``complete: true``; its JSON Schema is ``biasamp/results.schema.json``.
``by_pair.csv``, ``per_template.csv``, ``by_group.csv``
    The same tables as CSV (``by_group.csv`` only when the templates have groups).
``tables.csv`` or ``tables.parquet``
    Long probability tables: ``template_id, direction, task, attribute, prob, log_prob``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ._errors import BiasampError, MissingDependencyError
from ._files import json_loads, read_text, sha256_file
from ._output import OutputFolder
from ._schema import (  # noqa: F401
    AGREEMENT_COLUMNS,
    BY_GROUP_COLUMNS,
    BY_PAIR_COLUMNS,
    DATA_FILES,
    PER_TEMPLATE_COLUMNS,
    SCHEMA_VERSION,
    SUMMARY_KEYS,
    TABLE_COLUMNS,
    TABLE_FORMATS,
    AgreementRow,
    BaseRatesInfo,
    BootstrapInfo,
    ByGroupRow,
    ByPairRow,
    ModelInfo,
    PerTemplateRow,
    Provenance,
    ResultsFile,
    ScorerInfo,
    SummaryRow,
    TasksInfo,
    TemplatesInfo,
    check_version,
    jsonable,
    parse,
)
from ._validation import OneOf, check

__all__ = ["SCHEMA_VERSION", "ProbeResult", "Provenance"]


def _frame(rows, model) -> pd.DataFrame:
    """The validated records of ``model`` as a frame; their numbers (null: NaN) as floats."""
    df = pd.DataFrame([r.model_dump() for r in rows], columns=list(model.model_fields))
    return df.astype(
        {c: float for c, f in model.model_fields.items() if f.annotation == (float | None)}
    )


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
        ``.compat``, ``.note``, ``.timestamp`` (see :mod:`biasamp._schema`).
    config : dict
        The resolved configuration (its bootstrap options are ``provenance.bootstrap``).
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
            raise TypeError(
                "ProbeResult.provenance must be a biasamp.results.Provenance "
                "(Provenance.model_validate reads a dict); got "
                f"{type(self.provenance).__name__}"
            )
        if self.by_group is None:
            self.by_group = pd.DataFrame(columns=list(BY_GROUP_COLUMNS))
        if self.sign_agreement is None:
            self.sign_agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
        # a count or "not measured" (None): nullable integers, written as int or null
        self.summary = self.summary.assign(
            n_tasks_unsupported=self.summary["n_tasks_unsupported"].astype("Int64")
        )
        # true, false or "not measured" (null): a nullable boolean, in memory and on reading
        self.by_pair = self.by_pair.assign(
            sign_supported=self.by_pair["sign_supported"].astype("boolean")
        )

    @property
    def model(self) -> str:
        """The model id or folder the result belongs to."""
        return self.provenance.model.name

    def to_json_dict(self) -> dict:
        """The content of ``results.json`` (but the data files' sha256 and the completion
        mark, written by :meth:`finish`)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "summary": [
                {k: jsonable(rec[k]) for k in SUMMARY_KEYS}
                for rec in self.summary.to_dict(orient="records")
            ],
            **{
                k: jsonable(getattr(self, k).to_dict(orient="records"))
                for k in ("by_pair", "per_template", "by_group", "sign_agreement", "audit")
            },
            "mass": jsonable(self.mass),
            "provenance": jsonable(self.provenance.model_dump(mode="json")),
            "config": jsonable(self.config),
        }

    def write_files(self, folder: Path, *, tables: str = "csv") -> None:
        """Write the data files (not ``results.json``) into an existing folder."""
        tables = check(tables, OneOf(TABLE_FORMATS), "tables")
        if tables == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise MissingDependencyError(
                    "tables='parquet' needs pyarrow: pip install 'biasamp[parquet]' "
                    "(or pip install pyarrow), or use tables='csv'"
                ) from None
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
            summary=_frame(file.summary, SummaryRow),
            by_pair=_frame(file.by_pair, ByPairRow),
            per_template=_frame(file.per_template, PerTemplateRow),
            tables=tab,
            audit=pd.DataFrame(file.audit),
            mass=file.mass,
            provenance=file.provenance,
            config=file.config,
            by_group=_frame(file.by_group, ByGroupRow),
            sign_agreement=_frame(file.sign_agreement, AgreementRow),
        )
