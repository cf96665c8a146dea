"""Base-rate sources: the (task, attribute) joint table a model is compared with.

Every source answers ``source.table(tasks, attributes, *, direction=None)`` with a
:class:`BaseRateTable`: a non-negative ``joint`` DataFrame (rows = tasks in the requested
order, columns = attributes in the requested order), an optional explicit
``association`` (-1/0/1; ``None`` = the metric derives ``sign(P(T|A) - P(T))`` from the
joint), the ``direction`` it was built for (``None`` = one table for both), the tie
tolerance (``None`` = the metric's default; ``0.0`` for the paper-compatible sources)
and a ``provenance`` dict.

Registered sources (``list_sources()``)::

    uniform               equal joint, association from the WinoBias groups
    uniform:SOURCE        equal joint, association = signs of SOURCE (e.g. uniform:labor-2016;
                          uniform:winobias = uniform)
    uniform-wang2021      the paper's +-1e-7 construction (compat; needs direction)
    labor-2016            employed x share (32 WinoBias occupations, c. 2015-2017 CPS)
    labor-2016-shares     [1 - pct_female, pct_female] per occupation (40), P(T) uniform
    labor-2016-wang2021   the paper's direction-specific labor construction (compat)
    labor-2022            BLS CPS 2022 Table 11 via the WinoBias -> BLS mapping
    bergsma               Bergsma & Lin (2006) text pronoun shares (60 Winogender occupations)
    wikipedia             counts by biasamp.corpus (default rule) on WikiText-103 valid+test
    wikipedia-wang2021    counts with the paper's rule (compat; needs direction)
    file:PATH.csv         the user's own table (schema in base_rates/README.md)

Missing tasks or attributes raise :class:`MissingEntriesError` listing what is missing
and what the source has.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import math
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ._data import data_dir
from ._errors import BiasampError
from ._registry import unknown_name

__all__ = [
    "BaseRateSource",
    "BaseRateTable",
    "MissingEntriesError",
    "ZeroRowWarning",
    "derive_association",
    "get_source",
    "list_sources",
    "read_table_csv",
    "winobias_groups",
]

log = logging.getLogger(__name__)

EPS_WANG2021 = 1e-7
COMPAT_SOURCES = {"wang2021": {"uniform": "uniform-wang2021", "labor-2016": "labor-2016-wang2021",
                               "wikipedia": "wikipedia-wang2021"}}
_DIRECTIONS = {"attribute_to_task": "attribute_to_task", "a->t": "attribute_to_task",
               "at": "attribute_to_task", "task_to_attribute": "task_to_attribute",
               "t->a": "task_to_attribute", "ta": "task_to_attribute"}
_PRONOUNS = ("he", "she", "they")


class MissingEntriesError(BiasampError):
    """Requested tasks or attributes that a source does not have."""

    def __init__(self, source: str, missing_tasks=(), missing_attributes=(), tasks=(),
                 attributes=(), note: str = ""):
        self.missing_tasks = list(missing_tasks)
        self.missing_attributes = list(missing_attributes)
        parts = []
        if self.missing_tasks:
            parts.append(f"tasks {self.missing_tasks} not in base-rate source {source!r} "
                         f"(it has {len(tasks)}: {', '.join(map(str, tasks))})")
        if self.missing_attributes:
            parts.append(f"attributes {self.missing_attributes} not in base-rate source "
                         f"{source!r} (it has: {', '.join(map(str, attributes))})")
        super().__init__("; ".join(parts) + (f"; {note}" if note else ""))


class ZeroRowWarning(UserWarning):
    """Some requested tasks have an all-zero row (P(A|T) undefined for them)."""


@dataclass
class BaseRateTable:
    """A base joint table over (task, attribute).

    Attributes
    ----------
    joint : pandas.DataFrame of shape (n_tasks, n_attributes)
        Non-negative counts or probabilities; index = tasks, columns = attributes, in
        the requested order.
    association : pandas.DataFrame of shape (n_tasks, n_attributes) or None
        Explicit sign matrix (-1/0/1); ``None`` = derive ``sign(P(T|A) - P(T))`` from joint.
    direction : {"attribute_to_task", "task_to_attribute"} or None
        The direction this table was built for; ``None`` = valid for both.
    tie_tol : float or None
        Tolerance under which the sign is 0; ``None`` = the metric's default.
    provenance : dict
        name, year, citation, url, license, method, files (name + sha256), ...
    """

    joint: pd.DataFrame
    association: pd.DataFrame | None = None
    direction: str | None = None
    tie_tol: float | None = None
    provenance: dict = field(default_factory=dict)
    undefined: str | None = None

    @property
    def zero_rows(self) -> list[str]:
        """Tasks whose joint row sums to 0."""
        return [t for t, s in zip(self.joint.index, self.joint.to_numpy().sum(axis=1)) if s == 0]


# ---------------------------------------------------------------------------------------
# helpers

def _norm_direction(direction, *, required: bool, source: str) -> str | None:
    if direction is None:
        if required:
            raise BiasampError(
                f"direction is required for base-rate source {source!r} (a compat source builds "
                f"one table per direction); use one of {{'attribute_to_task', "
                f"'task_to_attribute'}}; got None")
        return None
    key = str(direction).strip().lower()
    if key not in _DIRECTIONS:
        raise BiasampError("direction must be one of {'attribute_to_task', 'task_to_attribute'} "
                           f"(or 'A->T', 'T->A'); got {direction!r}")
    return _DIRECTIONS[key]


def _names(values, what: str) -> list[str]:
    if isinstance(values, str):
        values = [v.strip() for v in values.split(",")]
    try:
        values = [str(v) for v in values]
    except TypeError:
        raise BiasampError(f"{what} must be a list of names; got {values!r}") from None
    if not values or any(not v.strip() for v in values):
        raise BiasampError(f"{what} must be a non-empty list of non-empty names; got {values!r}")
    dup = sorted({v for v in values if values.count(v) > 1})
    if dup:
        raise BiasampError(f"{what} must be unique; got duplicates {dup} in {values!r}")
    return values


def _select(df: pd.DataFrame, tasks, attributes, source: str, *, aliases=None,
            note: str = "") -> pd.DataFrame:
    """Rows/columns of df in the requested order, resolving task aliases."""
    aliases = aliases or {}
    keys = [t if t in df.index else aliases.get(t, t) for t in tasks]
    miss_t = [t for t, k in zip(tasks, keys) if k not in df.index]
    miss_a = [a for a in attributes if a not in df.columns]
    if miss_t or miss_a:
        raise MissingEntriesError(source, miss_t, miss_a, list(df.index), list(df.columns), note)
    out = df.loc[keys, list(attributes)].copy()
    out.index = pd.Index(list(tasks), name="task")
    out.columns = pd.Index(list(attributes), name="attribute")
    return out


def _check_joint(joint: pd.DataFrame, source: str) -> None:
    values = joint.to_numpy(dtype=float)
    if not np.isfinite(values).all() or (values < 0).any():
        raise BiasampError(f"base-rate source {source!r} produced a joint table with negative or "
                           f"non-finite values")


def _warn_zero_rows(table: BaseRateTable, source: str) -> None:
    zero = table.zero_rows
    if zero:
        msg = (f"base-rate source {source!r}: {len(zero)} task(s) have an all-zero row, so "
               f"P(A|T) is undefined (NaN) for them: {zero}")
        log.warning(msg)
        warnings.warn(msg, ZeroRowWarning, stacklevel=3)


@lru_cache(maxsize=None)
def _sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _file_entry(path: Path) -> dict:
    return {"name": path.name, "sha256": _sha256(str(path))}


def _data(name: str) -> Path:
    return data_dir("base_rates") / name


def derive_association(joint: pd.DataFrame, *, tie_tol: float = 1e-12) -> pd.DataFrame:
    """Sign matrix ``sign(P(T=t|A=a) - P(T=t))`` of a joint table.

    Parameters
    ----------
    joint : DataFrame of shape (n_tasks, n_attributes)
    tie_tol : float, default 1e-12
        Differences with absolute value <= tie_tol give 0.

    Returns
    -------
    DataFrame of int, same shape and labels.

    Examples
    --------
    >>> j = pd.DataFrame([[30, 10], [10, 30], [20, 20]], columns=["he", "she"])
    >>> derive_association(j).to_numpy().tolist()
    [[1, -1], [-1, 1], [0, 0]]
    """
    x = np.ascontiguousarray(joint.to_numpy(dtype=float))
    col = x.sum(axis=0, keepdims=True)
    p_t_a = x / col
    p_t = x.sum(axis=1, keepdims=True) / col.sum()
    d = p_t_a - p_t
    s = np.where(np.abs(d) <= tie_tol, 0, np.sign(d)).astype(int)
    return pd.DataFrame(s, index=joint.index, columns=joint.columns)


# ---------------------------------------------------------------------------------------
# WinoBias groups

@lru_cache(maxsize=1)
def _winobias_table() -> pd.DataFrame:
    return pd.read_csv(_data("winobias40_pct_female.csv"), dtype={"occupation": str})


@lru_cache(maxsize=1)
def _aliases() -> dict[str, str]:
    """WinoBias list names that differ from the paper's words (mechanic -> mechanician)."""
    t = _winobias_table()
    return {str(a): str(o) for a, o in zip(t["winobias_list_name"], t["occupation"]) if a != o}


def winobias_groups() -> dict[str, str]:
    """Occupation -> ``"male_biased"`` / ``"female_biased"`` for the 40 WinoBias occupations.

    Includes the WinoBias list spellings (``construction worker``, ``mechanic``,
    ``tailor``) besides the paper's words (``constructor``, ``mechanician``, ``sewer``).

    Examples
    --------
    >>> g = winobias_groups()
    >>> g["nurse"], g["janitor"], g["tailor"], len(g)
    ('female_biased', 'male_biased', 'female_biased', 43)
    """
    t = _winobias_table()
    out = dict(zip(t["occupation"].astype(str), t["winobias_group"].astype(str)))
    for alias, occ in _aliases().items():
        out[alias] = out[occ]
    return out


def _groups_for(tasks, source: str) -> list[str]:
    g = winobias_groups()
    missing = [t for t in tasks if t not in g]
    if missing:
        raise MissingEntriesError(
            source, missing, (), sorted(g), (),
            note="the association needs a WinoBias group (male_biased/female_biased) per task; "
                 "use 'uniform:SOURCE' to take the signs from another source")
    return [g[t] for t in tasks]


# ---------------------------------------------------------------------------------------
# sources

class BaseRateSource:
    """Interface of a base-rate source (subclasses implement :meth:`_table`)."""

    name: str = ""
    description: str = ""
    requires_direction: bool = False

    def table(self, tasks, attributes, *, direction=None) -> BaseRateTable:
        """Build the base table for these tasks and attributes.

        Parameters
        ----------
        tasks : list of str
            Occupations (rows, in this order).
        attributes : list of str
            Attributes (columns, in this order), e.g. ``["he", "she", "they"]``.
        direction : {"attribute_to_task", "task_to_attribute", "A->T", "T->A"}, optional
            Required by the compat sources (``*-wang2021``); others accept and ignore it.

        Returns
        -------
        BaseRateTable
        """
        tasks = _names(tasks, "tasks")
        attributes = _names(attributes, "attributes")
        direction = _norm_direction(direction, required=self.requires_direction,
                                    source=self.name)
        table = self._table(tasks, attributes, direction)
        _check_joint(table.joint, self.name)
        _warn_zero_rows(table, self.name)
        return table

    def _table(self, tasks, attributes, direction) -> BaseRateTable:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


_WINOBIAS_PROV = {
    "citation": "Zhao et al. (2018), Gender Bias in Coreference Resolution: Evaluation and "
                "Debiasing Methods, NAACL (WinoBias occupation groups)",
    "url": "https://github.com/uclanlp/corefBias",
}


class UniformSource(BaseRateSource):
    """Equal joint (P(A|T) = 1/|A|, P(T) = 1/|T|) with an explicit association.

    The joint is all ones, so the metric's ratios are exact: ``1.0 / |A|`` and
    ``1 / |T|``. The association comes from the WinoBias groups (male_biased: he +1,
    she -1; female_biased: she +1, he -1; they 0) or, with ``association_source``, from
    the signs of another source (``they`` = 0 when that source has no ``they``).
    """

    def __init__(self, association_source: str | None = None):
        self.association_source = association_source
        self.name = "uniform" if association_source is None else f"uniform:{association_source}"
        self.description = ("equal joint; association from "
                            + ("the WinoBias groups" if association_source is None
                               else f"the signs of {association_source!r}"))

    def _table(self, tasks, attributes, direction):
        joint = pd.DataFrame(np.ones((len(tasks), len(attributes))),
                             index=pd.Index(tasks, name="task"),
                             columns=pd.Index(attributes, name="attribute"))
        prov = {"name": self.name, "year": None, "license": "n/a (constructed)",
                "method": "joint = 1 for every (task, attribute): P(A|T) = 1/|A|, P(T) = 1/|T|; "
                          + self.description, "files": []}
        if self.association_source is None:
            bad = [a for a in attributes if a not in _PRONOUNS]
            if bad:
                raise MissingEntriesError(self.name, (), bad, (), _PRONOUNS,
                                          note="WinoBias groups define signs for he/she/they only")
            groups = _groups_for(tasks, self.name)
            sign = {"male_biased": {"he": 1, "she": -1, "they": 0},
                    "female_biased": {"he": -1, "she": 1, "they": 0}}
            assoc = [[sign[g][a] for a in attributes] for g in groups]
            prov.update(_WINOBIAS_PROV)
            prov["files"] = [_file_entry(_data("winobias40_pct_female.csv"))]
        else:
            other = get_source(self.association_source)
            if other.requires_direction:
                raise BiasampError(f"uniform:SOURCE needs a direction-independent source; "
                                   f"{self.association_source!r} is a compat source")
            known = [a for a in attributes if a != "they"]
            try:
                base = other.table(tasks, attributes)
                a_df = base.association if base.association is not None else \
                    derive_association(base.joint)
            except MissingEntriesError as exc:
                if exc.missing_tasks or exc.missing_attributes != ["they"] or not known:
                    raise
                base = other.table(tasks, known)
                a_df = base.association if base.association is not None else \
                    derive_association(base.joint)
                a_df = a_df.reindex(columns=attributes).fillna(0)
            assoc = a_df.loc[tasks, attributes].to_numpy(dtype=int)
            prov["association_provenance"] = base.provenance
        association = pd.DataFrame(np.asarray(assoc, dtype=int), index=joint.index,
                                   columns=joint.columns)
        return BaseRateTable(joint, association, None, None, prov)


class UniformWang2021Source(BaseRateSource):
    """The paper's uniform base with +-1e-7 nudges (reference-semantics §3), per direction.

    With ``n`` tasks, ``occu_num = n / 2`` (the paper's list is half male-biased).
    T->A: every cell 1/2 (two pronouns) or 1/3 (three), +eps for the stereotyped pronoun
    and -eps for the others (``they`` always -eps). A->T: the same pattern around
    ``1/(2*occu_num)`` (two pronouns) or ``1./2*occu_num`` (three: the paper's precedence
    slip, = occu_num / 2), then column-normalised. Male/female-biased come from the
    WinoBias groups. Attributes: he, she and optionally they.
    """

    name = "uniform-wang2021"
    description = "the paper's uniform base with +-1e-7 nudges (compat; needs direction)"
    requires_direction = True

    def _table(self, tasks, attributes, direction):
        bad = [a for a in attributes if a not in _PRONOUNS]
        if bad or "he" not in attributes or "she" not in attributes:
            raise MissingEntriesError(self.name, (), bad or [a for a in ("he", "she")
                                                             if a not in attributes],
                                      (), _PRONOUNS, note="needs he and she, optionally they")
        groups = np.array(_groups_for(tasks, self.name))
        male, female = groups == "male_biased", groups == "female_biased"
        cols = [a for a in _PRONOUNS if a in attributes]  # the paper's column order
        n, k = len(tasks), len(cols)
        occu_num = n / 2
        eps = EPS_WANG2021
        if direction == "attribute_to_task":
            c = 1. / (2 * occu_num) if k == 2 else 1. / 2 * occu_num
        else:
            c = .5 if k == 2 else 1. / 3.
        x = np.zeros((n, k)) + c
        x[male, 0] += eps
        x[male, 1] -= eps
        x[female, 0] -= eps
        x[female, 1] += eps
        if k == 3:
            x[male, 2] -= eps
            x[female, 2] -= eps
        if direction == "attribute_to_task":
            x = x / np.sum(x, axis=0, keepdims=True)
        joint = pd.DataFrame(x, index=pd.Index(tasks, name="task"),
                             columns=pd.Index(cols, name="attribute"))[list(attributes)]
        prov = {"name": self.name, "year": 2021, "license": "n/a (constructed)",
                "citation": "Wang & Russakovsky (2021), Directional Bias Amplification, ICML; "
                            "fit_bert/fit_sentences.py (base_source 0)",
                "url": "https://github.com/princetonvisualai/directional-bias-amp",
                "method": f"{direction}: constant {c!r} +-{eps} by WinoBias group"
                          + (", column-normalised" if direction == "attribute_to_task" else ""),
                "files": [_file_entry(_data("winobias40_pct_female.csv"))]}
        return BaseRateTable(joint, None, direction, 0.0, prov, "tie")


_LABOR2016_PROV = {
    "year": 2016,
    "citation": "U.S. Bureau of Labor Statistics, CPS Table 11 (c. 2015-2017 annual averages) "
                "as used by WinoBias (Zhao et al. 2018) and Wang & Russakovsky (2021)",
    "url": "https://www.bls.gov/cps/cpsaat11.htm",
    "license": "US federal government work (public domain); derived table MIT "
               "(princetonvisualai/directional-bias-amp)",
}


@lru_cache(maxsize=1)
def _labor2016() -> pd.DataFrame:
    t = _winobias_table().set_index("occupation")
    return t[["winobias_group", "pct_female", "employed_thousands"]].astype(
        {"pct_female": float, "employed_thousands": float})


def _labor_files():
    return [_file_entry(_data("winobias40_pct_female.csv")),
            _file_entry(_data("labor_2016_winobias32.csv"))]


def _labor_counts(tasks, attributes, source: str) -> pd.DataFrame:
    t = _labor2016()
    no_emp = [x for x in t.index if math.isnan(t.loc[x, "employed_thousands"])]
    have = t.drop(index=no_emp)
    df = pd.DataFrame({"he": have["employed_thousands"] * (1. - (have["pct_female"] / 100.)),
                       "she": have["employed_thousands"] * (have["pct_female"] / 100.)})
    return _select(df, tasks, attributes, source, aliases=_aliases(),
                   note=f"no employment count for {no_emp} (only pct_female is known: use "
                        f"'labor-2016-shares')" if any(
                       _aliases().get(x, x) in no_emp for x in tasks) else "")


def _labor_shares(tasks, attributes, source: str) -> pd.DataFrame:
    t = _labor2016()
    she = t["pct_female"] / 100.
    df = pd.DataFrame({"he": 1. - she, "she": she})
    return _select(df, tasks, attributes, source, aliases=_aliases())


class Labor2016Source(BaseRateSource):
    """employed x (1 - pct_female) (he) and employed x pct_female (she), thousands.

    Covers the paper's 32 occupations; the 8 other WinoBias occupations have a share
    but no employment number and are reported missing (use ``labor-2016-shares``).
    """

    name = "labor-2016"
    description = "employed x share, 32 WinoBias occupations (c. 2015-2017 CPS)"

    def _table(self, tasks, attributes, direction):
        joint = _labor_counts(tasks, attributes, self.name)
        prov = {"name": self.name, **_LABOR2016_PROV, "files": _labor_files(),
                "method": "joint[t, he] = employed_thousands * (1 - pct_female/100), "
                          "joint[t, she] = employed_thousands * pct_female/100"}
        return BaseRateTable(joint, None, None, None, prov)


class Labor2016SharesSource(BaseRateSource):
    """[1 - pct_female, pct_female] per occupation (40 WinoBias); P(T) is uniform."""

    name = "labor-2016-shares"
    description = "P(A|T) shares, 40 WinoBias occupations, no employment weight (P(T) uniform)"

    def _table(self, tasks, attributes, direction):
        joint = _labor_shares(tasks, attributes, self.name)
        prov = {"name": self.name, **_LABOR2016_PROV, "files": _labor_files(),
                "method": "joint[t] = [1 - pct_female/100, pct_female/100]; rows sum to 1, "
                          "so P(T) is uniform over the requested tasks"}
        return BaseRateTable(joint, None, None, None, prov)


class Labor2016Wang2021Source(BaseRateSource):
    """The paper's labor base (compat): A->T column-normalised counts, T->A raw shares."""

    name = "labor-2016-wang2021"
    description = "the paper's labor construction (compat; needs direction)"
    requires_direction = True

    def _table(self, tasks, attributes, direction):
        if direction == "attribute_to_task":
            cols = _labor_counts(tasks, ["he", "she"], self.name)
            x = np.ascontiguousarray(cols.to_numpy())  # C order: same sums as the paper
            x = x / np.sum(x, axis=0, keepdims=True)
            method = "employed*(1-pct/100), employed*(pct/100), column-normalised"
        else:
            cols = _labor_shares(tasks, ["he", "she"], self.name)
            she = cols["she"].to_numpy()
            x = np.zeros((len(tasks), 2))
            x[:, 1] = she
            x[:, 0] = 1. - x[:, 1]
            method = "[1 - pct/100, pct/100] per occupation (not employment-weighted)"
        full = pd.DataFrame(x, index=cols.index, columns=pd.Index(["he", "she"], name="attribute"))
        joint = _select(full, tasks, attributes, self.name)
        prov = {"name": self.name, **_LABOR2016_PROV, "files": _labor_files(),
                "method": f"{direction}: {method} (fit_sentences.py base_source 1)"}
        return BaseRateTable(joint, None, direction, 0.0, prov, "tie")


class Labor2022Source(BaseRateSource):
    """BLS CPS Table 11, 2022 annual averages, via the WinoBias -> BLS row mapping.

    Five WinoBias occupations have no single BLS row (mapping ``none``: assistant, clerk,
    counselor, designer, attendant) and are reported missing. Several words share a row
    (laborer/constructor, cleaner/housekeeper, auditor/accountant, chief/CEO), as in the
    paper's 2016 numbers.
    """

    name = "labor-2022"
    description = "BLS CPS 2022 Table 11 via the WinoBias -> BLS mapping (35 of 40)"

    @staticmethod
    @lru_cache(maxsize=1)
    def _frame():
        m = pd.read_csv(_data("winobias40_to_bls_2020_2022.csv"), dtype=str)
        bls = pd.read_csv(_data("bls_cpsaat11_2022_clean.csv"), dtype={"occupation": str})
        bls = bls.set_index("occupation")
        rows, none = {}, []
        for occ, title, quality in zip(m["occupation"], m["bls_title"], m["mapping"]):
            if quality == "none" or not isinstance(title, str):
                none.append(occ)
                continue
            r = bls.loc[title]
            emp, pct = float(r["total_employed_thousands"]), float(r["pct_women"])
            rows[occ] = {"he": emp * (1. - pct / 100.), "she": emp * (pct / 100.),
                         "bls_title": title, "mapping": quality, "employed_thousands": emp,
                         "pct_women": pct}
        return pd.DataFrame.from_dict(rows, orient="index"), none

    def _table(self, tasks, attributes, direction):
        df, none = self._frame()
        aliases = _aliases()
        hit = [t for t in tasks if aliases.get(t, t) in none]
        joint = _select(df[["he", "she"]].astype(float), tasks, attributes, self.name,
                        aliases=aliases,
                        note=(f"no single BLS 2022 row for {none} (mapping 'none')" if hit else ""))
        keys = [t if t in df.index else aliases.get(t, t) for t in tasks]
        prov = {"name": self.name, "year": 2022,
                "citation": "U.S. Bureau of Labor Statistics, Current Population Survey, "
                            "Table 11 (2022 annual averages)",
                "url": "https://www.bls.gov/cps/cpsaat11.htm",
                "license": "US federal government work (public domain)",
                "method": "joint[t, he] = employed * (1 - pct_women/100), joint[t, she] = "
                          "employed * pct_women/100 (thousands) of the mapped BLS row",
                "no_bls_row": list(none),
                "rows": {t: {"bls_title": df.loc[k, "bls_title"], "mapping": df.loc[k, "mapping"]}
                         for t, k in zip(tasks, keys)},
                "files": [_file_entry(_data("winobias40_to_bls_2020_2022.csv")),
                          _file_entry(_data("bls_cpsaat11_2022_clean.csv"))]}
        return BaseRateTable(joint, None, None, None, prov)


class BergsmaSource(BaseRateSource):
    """Text-derived pronoun shares of Bergsma & Lin (2006), 60 Winogender occupations.

    joint[t] = [1 - p, p] with p = bergsma_pct_female / 100: shares with no frequency
    weight, so P(T) is uniform over the requested tasks.
    """

    name = "bergsma"
    description = "Bergsma & Lin (2006) pronoun shares, 60 Winogender occupations (P(T) uniform)"

    def _table(self, tasks, attributes, direction):
        path = _data("winogender_occupations_stats.tsv")
        t = pd.read_csv(path, sep="\t", dtype={"occupation": str}).set_index("occupation")
        she = t["bergsma_pct_female"].astype(float) / 100.
        joint = _select(pd.DataFrame({"he": 1. - she, "she": she}), tasks, attributes, self.name)
        prov = {"name": self.name, "year": 2006,
                "citation": "Bergsma & Lin (2006), Bootstrapping Path-Based Pronoun Resolution, "
                            "ACL; via Rudinger et al. (2018) Winogender schemas",
                "url": "https://github.com/rudinger/winogender-schemas",
                "license": "MIT (winogender-schemas)",
                "method": "joint[t] = [1 - bergsma_pct_female/100, bergsma_pct_female/100]; "
                          "rows sum to 1, so P(T) is uniform over the requested tasks",
                "files": [_file_entry(path)]}
        return BaseRateTable(joint, None, None, None, prov)


#: Vocabularies the shipped wikipedia counts were computed for, smallest first.
WIKIPEDIA_VOCABULARIES = ("winobias32", "winobias40", "winogender60")


class WikipediaSource(BaseRateSource):
    """Co-occurrence counts from WikiText-103 **valid + test** (not the paper's train split).

    One CSV per (rule, vocabulary): the counts depend on the vocabulary, because a
    sentence mentioning two listed occupations is dropped. ``table`` uses the smallest
    shipped vocabulary that holds every requested task. Tasks never counted give an
    all-zero row: a :class:`ZeroRowWarning` names them (P(A|T) is undefined there).
    ``wikipedia-wang2021`` (compat): A->T column-normalised counts, T->A raw counts.
    """

    def __init__(self, rule: str = "default"):
        self.rule = rule
        compat = rule == "wang2021"
        self.name = "wikipedia-wang2021" if compat else "wikipedia"
        self.requires_direction = compat
        self.description = (f"co-occurrence counts ({rule} rule) from WikiText-103 valid+test"
                            + (" (compat; needs direction)" if compat else ""))

    def _table(self, tasks, attributes, direction):
        tried = []
        for vocab in WIKIPEDIA_VOCABULARIES:
            path = _data(f"wikipedia_{self.rule}_{vocab}.csv")
            counts, prov0 = read_table_csv(path)
            tried += [t for t in counts.index if t not in tried]
            if all(t in counts.index for t in tasks):
                break
        else:
            missing = [t for t in tasks if t not in tried]
            raise MissingEntriesError(self.name, missing, (), tried, ("he", "she"))
        joint = _select(counts.astype(float), tasks, attributes, self.name)
        method = (f"sentences with exactly one {vocab} occupation and one gender word group "
                  f"({self.rule} rule) in WikiText-103 valid+test")
        if direction == "attribute_to_task":
            full = np.ascontiguousarray(
                _select(counts.astype(float), tasks, ["he", "she"], self.name).to_numpy())
            full = full / np.sum(full, axis=0, keepdims=True)
            joint = pd.DataFrame(full, index=joint.index,
                                 columns=pd.Index(["he", "she"], name="attribute"))[attributes]
            method += "; column-normalised (A->T)"
        prov = {"name": self.name, "year": 2016,
                "citation": "Merity et al. (2016), Pointer Sentinel Mixture Models (WikiText-103)",
                "url": "https://huggingface.co/datasets/Salesforce/wikitext",
                "license": "CC BY-SA 3.0 (WikiText)", "method": method, "vocabulary": vocab,
                "files": [_file_entry(path)], "counting": prov0}
        return BaseRateTable(joint, None, direction, 0.0 if self.requires_direction else None, undefined="tie" if self.requires_direction else None, provenance=
                             prov)


# ---------------------------------------------------------------------------------------
# user CSV

def read_table_csv(path) -> tuple[pd.DataFrame, dict]:
    """Read a base-rate CSV (wide or long) into a joint DataFrame.

    Schema (see ``base_rates/README.md``): lines starting with ``#`` before the header
    are comments; ``# provenance: {json}`` is read into the provenance. Then either
    *wide* ``task,ATTR1,ATTR2,...`` (one row per task) or *long*
    ``task,attribute,count`` / ``task,attribute,probability`` (one row per pair; every
    pair must be present). Values must be finite, non-negative numbers.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    joint : DataFrame of shape (n_tasks, n_attributes), float
    provenance : dict

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("task,attribute,count\\nnurse,he,1\\nnurse,she,9\\n")
    >>> read_table_csv(p)[0].loc["nurse"].tolist()
    [1.0, 9.0]
    """
    path = Path(path)
    if not path.is_file():
        raise BiasampError(f"base-rate CSV not found: {str(path)!r}")
    text = path.read_text(encoding="utf-8-sig")
    lines = text.splitlines(keepends=True)
    prov: dict = {}
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        line = lines[i].lstrip("#").strip()
        if line.startswith("provenance:"):
            try:
                prov = json.loads(line[len("provenance:"):])
            except json.JSONDecodeError as exc:
                raise BiasampError(f"{path}: bad '# provenance:' JSON line: {exc}") from None
        i += 1
    body = "".join(lines[i:])
    if not body.strip():
        raise BiasampError(f"base-rate CSV {str(path)!r} is empty (no header and rows)")
    try:
        df = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise BiasampError(f"base-rate CSV {str(path)!r} cannot be parsed: {exc}") from None
    header = [c.strip() for c in next(csv.reader(io.StringIO(body.lstrip("\n"))))]
    if len(set(header)) != len(header):
        raise BiasampError(f"base-rate CSV {str(path)!r} has duplicate columns: {header}")
    df.columns = [str(c).strip() for c in df.columns]
    if "task" not in df.columns:
        raise BiasampError(f"base-rate CSV {str(path)!r} needs a 'task' column; got columns "
                           f"{list(df.columns)} (wide: task,he,she,...; long: "
                           f"task,attribute,count|probability)")
    if df.empty:
        raise BiasampError(f"base-rate CSV {str(path)!r} has a header but no rows")
    for c in df.columns:
        df[c] = df[c].astype(str).str.strip()
    value_cols = [c for c in ("count", "probability") if c in df.columns]
    if "attribute" in df.columns:
        if len(value_cols) != 1 or len(df.columns) != 3:
            raise BiasampError(f"long base-rate CSV {str(path)!r} must have exactly the columns "
                               f"task,attribute and one of count|probability; got {list(df.columns)}")
        vcol = value_cols[0]
        _numeric(df, [vcol], path)
        dup = df[df.duplicated(["task", "attribute"], keep=False)]
        if len(dup):
            pairs = sorted(set(zip(dup["task"], dup["attribute"])))
            raise BiasampError(f"base-rate CSV {str(path)!r} has duplicate (task, attribute) rows: "
                               f"{pairs}")
        tasks = list(dict.fromkeys(df["task"]))
        attrs = list(dict.fromkeys(df["attribute"]))
        joint = df.pivot(index="task", columns="attribute", values=vcol).reindex(
            index=tasks, columns=attrs)
        if joint.isna().any().any():
            miss = [(t, a) for t in tasks for a in attrs if pd.isna(joint.loc[t, a])]
            raise BiasampError(f"long base-rate CSV {str(path)!r} lacks (task, attribute) pairs "
                               f"{miss} (every pair needs a row; write 0 for none)")
        joint = joint.astype(float)
        prov.setdefault("value", vcol)
    else:
        attrs = [c for c in df.columns if c != "task"]
        if not attrs:
            raise BiasampError(f"wide base-rate CSV {str(path)!r} needs attribute columns after "
                               f"'task'; got {list(df.columns)}")
        _numeric(df, attrs, path)
        dup = sorted(set(df.loc[df["task"].duplicated(), "task"]))
        if dup:
            raise BiasampError(f"base-rate CSV {str(path)!r} has duplicate task rows: {dup}")
        joint = df.set_index("task")[attrs].astype(float)
    empty = [t for t in joint.index if not str(t)]
    if empty:
        raise BiasampError(f"base-rate CSV {str(path)!r} has a row with an empty task name")
    joint.index = pd.Index([str(t) for t in joint.index], name="task")
    joint.columns = pd.Index([str(c) for c in joint.columns], name="attribute")
    return joint, prov


def _numeric(df: pd.DataFrame, cols, path) -> None:
    for c in cols:
        vals = pd.to_numeric(df[c], errors="coerce")
        bad = df.loc[vals.isna() | ~np.isfinite(vals.fillna(0)), ["task", c]]
        if len(bad):
            raise BiasampError(f"base-rate CSV {str(path)!r}: column {c!r} must be numeric; "
                               f"got {list(zip(bad['task'], bad[c]))[:5]}")
        neg = df.loc[vals < 0, ["task", c]]
        if len(neg):
            raise BiasampError(f"base-rate CSV {str(path)!r}: column {c!r} must be non-negative; "
                               f"got {list(zip(neg['task'], neg[c]))[:5]}")
        df[c] = vals.astype(float)


class FileSource(BaseRateSource):
    """A user table read from ``file:PATH.csv`` (see :func:`read_table_csv`)."""

    def __init__(self, path):
        self.path = Path(path)
        self.name = f"file:{path}"
        self.description = f"user table {path}"
        self._joint, self._prov = read_table_csv(self.path)

    def _table(self, tasks, attributes, direction):
        joint = _select(self._joint, tasks, attributes, self.name)
        prov = {"name": self.name, "year": None, "license": "user-supplied",
                "method": "read from a user CSV", "files": [
                    {"name": self.path.name, "path": str(self.path),
                     "sha256": hashlib.sha256(self.path.read_bytes()).hexdigest()}],
                "file_provenance": self._prov}
        for key in ("citation", "url", "year", "license"):
            if key in self._prov:
                prov[key] = self._prov[key]
        return BaseRateTable(joint, None, None, None, prov)


# ---------------------------------------------------------------------------------------
# registry

_REGISTRY = {
    "uniform": UniformSource,
    "uniform-wang2021": UniformWang2021Source,
    "labor-2016": Labor2016Source,
    "labor-2016-shares": Labor2016SharesSource,
    "labor-2016-wang2021": Labor2016Wang2021Source,
    "labor-2022": Labor2022Source,
    "bergsma": BergsmaSource,
    "wikipedia": lambda: WikipediaSource("default"),
    "wikipedia-wang2021": lambda: WikipediaSource("wang2021"),
}


def list_sources() -> list[str]:
    """Names of the registered sources (plus the ``file:`` and ``uniform:`` forms).

    Examples
    --------
    >>> "labor-2016" in list_sources()
    True
    """
    return sorted(_REGISTRY)


def get_source(name: str) -> BaseRateSource:
    """Look up a base-rate source by name.

    Parameters
    ----------
    name : str
        A registered name, ``uniform:SOURCE`` (equal joint, signs of SOURCE) or
        ``file:PATH.csv``.

    Returns
    -------
    BaseRateSource

    Examples
    --------
    >>> t = get_source("labor-2016").table(["nurse", "janitor"], ["he", "she"])
    >>> t.joint.round(2).to_numpy().tolist()
    [[310.2, 2791.8], [1502.16, 773.84]]
    """
    if not isinstance(name, str) or not name.strip():
        raise BiasampError(f"base-rate source name must be a non-empty string; got {name!r}")
    name = name.strip()
    if name.startswith("file:"):
        return FileSource(name[5:])
    if name.startswith("uniform:"):
        inner = name[len("uniform:"):]
        if inner == "winobias":  # the default association, spelled out
            return UniformSource()
        if inner not in _REGISTRY and not inner.startswith("file:"):
            raise unknown_name("base-rate source", inner, list_sources())
        return UniformSource(inner)
    if name not in _REGISTRY:
        raise unknown_name("base-rate source", name, list_sources() + ["file:PATH.csv",
                                                                      "uniform:SOURCE"])
    return _REGISTRY[name]()


def _vocabulary(name: str) -> list[str]:
    """The task lists the shipped tables were built for (winobias32/40, winogender60)."""
    if name == "winobias32":
        return pd.read_csv(_data("labor_2016_winobias32.csv"), dtype=str)["occupation"].tolist()
    if name == "winobias40":
        return _winobias_table()["occupation"].astype(str).tolist()
    if name == "winogender60":
        return pd.read_csv(_data("winogender_occupations_stats.tsv"), sep="\t",
                           dtype=str)["occupation"].tolist()
    raise unknown_name("task vocabulary", name, WIKIPEDIA_VOCABULARIES)
