"""The table every base-rate source returns, the source interface and their shared helpers."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import TIE_TOL
from .._errors import BiasampError, ZeroRowWarning
from .._files import data_dir, sha256_file
from .._registry import Registry
from .._validation import Constraint, Direction, OneOf, Optional, check, normalised, validate_params

#: Values of :attr:`BaseRateTable.undefined` and :attr:`BaseRateTable.counts_transform`.
UNDEFINED_MODES = ("skip", "tie")
COUNTS_TRANSFORMS = ("identity", "column-normalise")
#: The paper's metric settings, carried by every paper-compatible (``*-wang2021``) table.
PAPER_METRIC = {"tie_tol": 0.0, "undefined": "tie"}
#: Registered sources: name -> source class (called with no argument), with descriptions.
SOURCES = Registry("base-rate source", extra_names=("file:PATH.csv", "uniform:SOURCE"))


class MissingEntriesError(BiasampError):
    """Requested tasks or attributes that a source does not have.

    Parameters
    ----------
    source : str
    missing_tasks, missing_attributes : sequence of str
    tasks, attributes : sequence of str
        What the source has.
    note : str
    """

    def __init__(  # noqa: PLR0917 - a public exception's constructor
        self,
        source: str,
        missing_tasks=(),
        missing_attributes=(),
        tasks=(),
        attributes=(),
        note: str = "",
    ):
        self.missing_tasks = list(missing_tasks)
        self.missing_attributes = list(missing_attributes)
        self.available_tasks = list(tasks)
        parts = []
        if self.missing_tasks:
            parts.append(
                f"tasks {self.missing_tasks} not in base-rate source {source!r} "
                f"(it has {len(tasks)}: {', '.join(map(str, tasks))})"
            )
        if self.missing_attributes:
            parts.append(
                f"attributes {self.missing_attributes} not in base-rate source "
                f"{source!r} (it has: {', '.join(map(str, attributes))})"
            )
        super().__init__("; ".join(parts) + (f"; {note}" if note else ""))


@dataclass
class BaseRateTable:
    """A base joint table over (task, attribute) (docs/probing.md).

    Attributes
    ----------
    joint : pandas.DataFrame of shape (n_tasks, n_attributes)
        Non-negative counts or probabilities, in the requested order.
    association : pandas.DataFrame or None
        Explicit sign matrix (-1/0/1); ``None``: derived from ``joint``.
    direction : {"attribute_to_task", "task_to_attribute"} or None
    tie_tol, undefined : float or None, {"skip", "tie"} or None
        The metric settings the table needs (``None``: the metric's defaults).
    counts : pandas.DataFrame or None
        The raw co-occurrence counts behind ``joint``, which the probe resamples.
    counts_transform : {"identity", "column-normalise"}
    provenance : dict
        name, year, citation, url, license, method, files, ``kind`` (what the source is:
        counts, statistics, constructed or user), ``about``.
    """

    joint: pd.DataFrame
    association: pd.DataFrame | None = None
    direction: str | None = None
    tie_tol: float | None = None
    undefined: str | None = field(default=None, kw_only=True)
    provenance: dict = field(default_factory=dict)
    counts: pd.DataFrame | None = field(default=None, kw_only=True)
    counts_transform: str = field(default="identity", kw_only=True)

    def __post_init__(self):
        check(self.undefined, Optional(OneOf(UNDEFINED_MODES)), "undefined")
        check(self.counts_transform, OneOf(COUNTS_TRANSFORMS), "counts_transform")

    def joint_from_counts(self, counts: np.ndarray) -> np.ndarray:
        """``joint`` from counts of shape (..., n_tasks, n_attributes), as from :attr:`counts`."""
        x = np.asarray(counts, dtype=np.float64)
        if self.counts_transform == "column-normalise":
            with np.errstate(invalid="ignore", divide="ignore"):
                return x / x.sum(axis=-2, keepdims=True)
        return x

    @property
    def zero_rows(self) -> list[str]:
        """Tasks whose joint row sums to 0."""
        return [t for t, s in zip(self.joint.index, self.joint.to_numpy().sum(axis=1)) if s == 0]


class _Labels(Constraint):
    def __call__(self, value, name):
        try:
            items = self.normalise(value)
        except TypeError:
            self.fail(value, name, "a list of names")
        if not items or any(not v.strip() for v in items):
            self.fail(items, name, "a non-empty list of non-empty names")
        dup = sorted({v for v in items if items.count(v) > 1})
        if dup:
            raise BiasampError(f"{name} must be unique; got duplicates {dup} in {items!r}")

    def normalise(self, value):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",")]
        return [str(v) for v in value]


_TABLE_PARAMS = {"tasks": _Labels(), "attributes": _Labels(), "direction": Optional(Direction)}


class BaseRateSource:
    """Interface of a base-rate source: subclasses implement ``_table(tasks, attributes,
    direction)`` with lists of names and a canonical direction (or ``None``)."""

    name: str = ""
    description: str = ""
    requires_direction: bool = False

    def __init_subclass__(cls, *, registered: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        if registered:  # a shipped source: in SOURCES under its name
            SOURCES.register(cls.name, cls, description=cls.description)

    @validate_params(_TABLE_PARAMS)
    def table(self, tasks, attributes, *, direction=None) -> BaseRateTable:
        """The base table for these tasks and attributes, its joint checked, zero rows warned; a
        task the source lacks is asked under its other spellings (docs/benchmark-sentences.md).

        Parameters
        ----------
        tasks, attributes : list of str
            Rows and columns, in this order.
        direction : {"attribute_to_task", "task_to_attribute", "A->T", "T->A"}, optional
            Required by the compat sources (``*-wang2021``); others ignore it.

        Returns
        -------
        BaseRateTable
        """
        tasks, attributes, direction = normalised(
            _TABLE_PARAMS, tasks=tasks, attributes=attributes, direction=direction
        )
        if direction is None and self.requires_direction:
            raise BiasampError(
                f"direction is required for base-rate source {self.name!r} (a compat source "
                f"builds one table per direction); use one of {{'attribute_to_task', "
                f"'task_to_attribute'}}; got None"
            )
        table = self._with_aliases(list(tasks), list(attributes), direction)
        check_joint(table.joint, self.name)
        if zero := table.zero_rows:
            warnings.warn(
                f"base-rate source {self.name!r}: {len(zero)} task(s) have an all-zero row, "
                f"so P(A|T) is undefined (NaN) for them: {zero}",
                ZeroRowWarning,
                stacklevel=3,  # table <- validate_params wrapper <- the caller
            )
        return table

    def _with_aliases(self, tasks, attributes, direction) -> BaseRateTable:
        """``_table`` under the requested spellings, else the canonical ones, else the source's."""
        from ..tasks import task_aliases

        try:
            return self._table(tasks, attributes, direction)
        except MissingEntriesError as exc:
            if not exc.missing_tasks:
                raise
            errors = [exc]
        aliases = task_aliases()
        have = set(errors[0].available_tasks)
        tries = [
            [aliases.canonical(t) for t in tasks],
            [next((w for w in aliases.spellings(t) if w in have), t) for t in tasks],
        ]
        for alt in dict.fromkeys(tuple(a) for a in tries if a != tasks):
            if len(set(alt)) != len(alt):
                same = sorted({t for t, a in zip(tasks, alt) if alt.count(a) > 1})
                raise BiasampError(
                    f"tasks {same} are spellings of the same occupation (task "
                    f"alias table {aliases.file!r}); request one of them"
                )
            try:
                table = self._table(list(alt), attributes, direction)
            except MissingEntriesError as exc:
                errors.append(exc)
                continue
            index = pd.Index(tasks, name="task")
            prov = {
                **table.provenance,
                "task_aliases": {t: a for t, a in zip(tasks, alt) if t != a},
                "task_aliases_file": {"name": aliases.file, "sha256": aliases.sha256},
            }
            assoc = table.association
            return replace(
                table,
                joint=table.joint.set_axis(index, axis=0),
                association=None if assoc is None else assoc.set_axis(index, axis=0),
                provenance=prov,
            )
        raise min(errors, key=lambda e: len(e.missing_tasks))

    def _table(self, tasks, attributes, direction) -> BaseRateTable:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def select_entries(
    df: pd.DataFrame, tasks, attributes, source: str, *, note: str = ""
) -> pd.DataFrame:
    """Rows/columns of df in the requested order; :class:`MissingEntriesError` for missing ones."""
    miss_t = [t for t in tasks if t not in df.index]
    miss_a = [a for a in attributes if a not in df.columns]
    if miss_t or miss_a:
        raise MissingEntriesError(
            source,
            missing_tasks=miss_t,
            missing_attributes=miss_a,
            tasks=list(df.index),
            attributes=list(df.columns),
            note=note,
        )
    return df.loc[list(tasks), list(attributes)].rename_axis(index="task", columns="attribute")


def column_normalised(df: pd.DataFrame) -> pd.DataFrame:
    """Each column divided by its sum, summed in C order (the paper's sums, bit for bit)."""
    x = np.ascontiguousarray(df.to_numpy())
    return pd.DataFrame(x / np.sum(x, axis=0, keepdims=True), df.index, df.columns)


def check_joint(joint: pd.DataFrame, source: str) -> None:
    """Refuse a joint that is not finite, is negative, all zero, or overflows when summed."""
    values = joint.to_numpy(dtype=float)
    where = f"base_rates: source {source!r}"

    def cell(mask) -> str:
        i, j = np.argwhere(mask)[0]
        return f"({joint.index[i]!r}, {joint.columns[j]!r}) = {values[i, j]!r}"

    if not np.isfinite(values).all():
        raise BiasampError(f"{where} has a non-finite value: {cell(~np.isfinite(values))}")
    if (values < 0).any():
        raise BiasampError(f"{where} has a negative value: {cell(values < 0)}")
    if not (values > 0).any():
        raise BiasampError(
            f"{where} is all zero for the requested tasks and attributes; "
            "BiasAmp-> is undefined against it"
        )
    with np.errstate(over="ignore"):
        sums = (values.sum(axis=0), values.sum(axis=1), values.sum())
    if not all(np.isfinite(s).all() for s in sums):
        raise BiasampError(
            f"{where} overflows when normalised (a row, column or total sum is "
            f"infinite; largest value {cell(values == values.max())}); rescale "
            "the table"
        )


def data_file(name: str) -> Path:
    return data_dir("base_rates") / name


_shipped_sha256 = cache(sha256_file)


def file_entry(path: Path) -> dict:
    """Provenance entry ``{"name", "sha256"}`` of a shipped data file (hash cached)."""
    return {"name": path.name, "sha256": _shipped_sha256(str(path))}


def derive_association(joint: pd.DataFrame, *, tie_tol: float = TIE_TOL) -> pd.DataFrame:
    """Sign matrix ``sign(P(T=t|A=a) - P(T=t))`` (0 within ``tie_tol``) of a joint table."""
    x = np.ascontiguousarray(joint.to_numpy(dtype=float))
    col = x.sum(axis=0, keepdims=True)
    p_t_a = x / col
    p_t = x.sum(axis=1, keepdims=True) / col.sum()
    d = p_t_a - p_t
    s = np.where(np.abs(d) <= tie_tol, 0, np.sign(d)).astype(int)
    return pd.DataFrame(s, index=joint.index, columns=joint.columns)
