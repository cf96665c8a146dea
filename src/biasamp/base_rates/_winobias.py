"""The sources read from the WinoBias occupation table: ``labor-2016(-shares)``, ``uniform``,
``uniform:SOURCE`` and the paper's ``*-wang2021`` constructions of them (bit for bit)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, ATTRIBUTES
from .._errors import BiasampError
from ._table import (
    PAPER_METRIC,
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    column_normalised,
    data_file,
    derive_association,
    file_entry,
    select_entries,
)

#: The shipped WinoBias table (40 occupations: group, pct_female, employment, list name).
WINOBIAS_FILE = "winobias40_pct_female.csv"

#: Sign of each pronoun per WinoBias group.
_GROUP_SIGNS = {
    "male_biased": {"he": 1, "she": -1, "they": 0},
    "female_biased": {"he": -1, "she": 1, "they": 0},
}


@lru_cache(maxsize=1)
def _winobias() -> pd.DataFrame:
    t = pd.read_csv(data_file(WINOBIAS_FILE), dtype={"occupation": str}).set_index("occupation")
    return t[["winobias_group", "pct_female", "employed_thousands"]].astype(
        {"pct_female": float, "employed_thousands": float}
    )


def winobias_file_entry() -> dict:
    return file_entry(data_file(WINOBIAS_FILE))


def labor_counts(tasks, attributes, source: str) -> pd.DataFrame:
    """employed x (1 - pct_female) (he), employed x pct_female (she), thousands."""
    t = _winobias()
    no_emp = t["employed_thousands"].isna()
    emp, she = t.loc[~no_emp, "employed_thousands"], t.loc[~no_emp, "pct_female"] / 100.0
    df = pd.DataFrame({"he": emp * (1.0 - she), "she": emp * she})
    note = ""
    if any(t.index[no_emp].isin(tasks)):
        note = (
            f"no employment count for {list(t.index[no_emp])} "
            "(only pct_female is known: use 'labor-2016-shares')"
        )
    return select_entries(df, tasks, attributes, source, note=note)


def labor_shares(tasks, attributes, source: str) -> pd.DataFrame:
    """[1 - pct_female, pct_female] / 100 per occupation (40 WinoBias)."""
    she = _winobias()["pct_female"] / 100.0
    return select_entries(pd.DataFrame({"he": 1.0 - she, "she": she}), tasks, attributes, source)


def groups_for(tasks, source: str) -> list[str]:
    """The WinoBias group of each task (the paper's spellings: ``table`` resolves the others)."""
    g = _winobias()["winobias_group"].astype(str).to_dict()
    missing = [t for t in tasks if t not in g]
    if missing:
        raise MissingEntriesError(
            source,
            missing_tasks=missing,
            tasks=sorted(g),
            note="the association needs a WinoBias group (male_biased/female_biased) per task; "
            "use 'uniform:SOURCE' to take the signs from another source",
        )
    return [g[t] for t in tasks]


class Labor2016Source(BaseRateSource, registered=True):
    name = "labor-2016"
    description = "employed x share, 32 WinoBias occupations (c. 2015-2017 CPS)"
    about = (
        "US labor statistics (BLS CPS, c. 2015-2017, as used by WinoBias): employed x "
        "share of women, a survey of millions of workers (treated as fixed)"
    )
    method = (
        "joint[t, he] = employed_thousands * (1 - pct_female/100), "
        "joint[t, she] = employed_thousands * pct_female/100"
    )
    _joint = staticmethod(labor_counts)

    def _table(self, tasks, attributes, direction):
        return self._labor_table(self._joint(tasks, attributes, self.name), self.method)

    def _labor_table(self, joint, method: str, **settings) -> BaseRateTable:
        prov = {
            "name": self.name,
            "year": 2016,
            "citation": "U.S. Bureau of Labor Statistics, CPS Table 11 (c. 2015-2017 annual "
            "averages) as used by WinoBias (Zhao et al. 2018) and Wang & Russakovsky (2021)",
            "url": "https://www.bls.gov/cps/cpsaat11.htm",
            "license": "US federal government work (public domain); derived table MIT "
            "(princetonvisualai/directional-bias-amp)",
            "files": [winobias_file_entry(), file_entry(data_file("labor_2016_winobias32.csv"))],
            "method": method,
            "kind": "statistics",
            "about": self.about,
        }
        return BaseRateTable(joint, provenance=prov, **settings)


class Labor2016SharesSource(Labor2016Source, registered=True):
    name = "labor-2016-shares"
    description = "P(A|T) shares, 40 WinoBias occupations, no employment weight (P(T) uniform)"
    about = (
        "US labor statistics (BLS CPS, c. 2015-2017): share of women per occupation, "
        "no employment weight (treated as fixed)"
    )
    method = (
        "joint[t] = [1 - pct_female/100, pct_female/100]; rows sum to 1, "
        "so P(T) is uniform over the requested tasks"
    )
    _joint = staticmethod(labor_shares)


class UniformSource(BaseRateSource, registered=True):
    """Equal joint (all ones: P(A|T) = 1/|A|, P(T) = 1/|T| exactly) with an explicit association:
    the WinoBias groups' signs or, with ``association_source``, another source's."""

    name = "uniform"
    description = "equal joint; association from the WinoBias groups"

    def __init__(self, association_source: str | None = None):
        self.association_source = association_source
        if association_source is not None:
            from . import get_source  # the package imports this module

            # resolved where it is named: a missing file is refused here, and read once
            self._other = get_source(association_source)
            if self._other.requires_direction:
                raise BiasampError(
                    f"uniform:SOURCE needs a direction-independent source; "
                    f"{association_source!r} is a compat source"
                )
            self.name = f"uniform:{association_source}"
            self.description = f"equal joint; association from the signs of {association_source!r}"

    def _table(self, tasks, attributes, direction):
        joint = pd.DataFrame(
            np.ones((len(tasks), len(attributes))),
            index=pd.Index(tasks, name="task"),
            columns=pd.Index(attributes, name="attribute"),
        )
        if self.association_source is None:
            assoc = self._group_signs(tasks, attributes)
            signs_of = "the WinoBias groups"
            extra = {
                "files": [winobias_file_entry()],
                "citation": "Zhao et al. (2018), Gender Bias in Coreference Resolution: "
                "Evaluation and Debiasing Methods, NAACL (WinoBias occupation groups)",
                "url": "https://github.com/uclanlp/corefBias",
            }
        else:
            assoc, other = self._source_signs(tasks, attributes)
            signs_of, extra = repr(self.association_source), {"association_provenance": other}
        prov = {
            "name": self.name,
            "year": None,
            "license": "n/a (constructed)",
            "method": "joint = 1 for every (task, attribute): P(A|T) = 1/|A|, P(T) = 1/|T|; "
            + self.description,
            "files": [],
            **extra,
            "kind": "constructed",
            "about": f"equal joint (P(A|T) = 1/|A|) with the signs of {signs_of}",
        }
        association = pd.DataFrame(
            np.asarray(assoc, dtype=int), index=joint.index, columns=joint.columns
        )
        return BaseRateTable(joint, association, provenance=prov)

    def _group_signs(self, tasks, attributes) -> list[list[int]]:
        bad = [a for a in attributes if a not in ATTRIBUTES]
        if bad:
            raise MissingEntriesError(
                self.name,
                missing_attributes=bad,
                attributes=ATTRIBUTES,
                note="WinoBias groups define signs for he/she/they only",
            )
        return [[_GROUP_SIGNS[g][a] for a in attributes] for g in groups_for(tasks, self.name)]

    def _source_signs(self, tasks, attributes) -> tuple[np.ndarray, dict]:
        other = self._other
        known = [a for a in attributes if a != "they"]
        try:
            base = other.table(tasks, attributes)
        except MissingEntriesError as exc:
            if exc.missing_tasks or exc.missing_attributes != ["they"] or not known:
                raise
            base = other.table(tasks, known)  # they: 0
        a_df = base.association
        a_df = derive_association(base.joint) if a_df is None else a_df
        a_df = a_df.reindex(columns=attributes).fillna(0)
        return a_df.loc[tasks, attributes].to_numpy(dtype=int), base.provenance


class UniformWang2021Source(BaseRateSource, registered=True):
    name = "uniform-wang2021"
    description = "the paper's uniform base with +-1e-7 nudges (compat; needs direction)"
    requires_direction = True

    def _table(self, tasks, attributes, direction):
        bad = [a for a in attributes if a not in ATTRIBUTES]
        if bad or "he" not in attributes or "she" not in attributes:
            missing = bad or [a for a in ("he", "she") if a not in attributes]
            raise MissingEntriesError(
                self.name,
                missing_attributes=missing,
                attributes=ATTRIBUTES,
                note="needs he and she, optionally they",
            )
        groups = np.array(groups_for(tasks, self.name))
        male, female = groups == "male_biased", groups == "female_biased"
        cols = [a for a in ATTRIBUTES if a in attributes]  # the paper's column order
        n, k = len(tasks), len(cols)
        # base_source 0 (reference-semantics §3): occu_num = n / 2 (half the list male-biased);
        # A->T 1/(2*occu_num), with three pronouns 1./2*occu_num (the paper's precedence slip),
        # then column-normalised; T->A 1/2 or 1/3; +eps for the stereotyped pronoun, -eps else
        occu_num = n / 2
        eps = 1e-7  # the nudge of the paper's uniform base
        if direction == ATTRIBUTE_TO_TASK:
            c = 1.0 / (2 * occu_num) if k == 2 else 1.0 / 2 * occu_num
        else:
            c = 0.5 if k == 2 else 1.0 / 3.0
        x = np.zeros((n, k)) + c
        for rows, signs in ((male, [1, -1, -1]), (female, [-1, 1, -1])):
            x[rows] += np.array(signs[:k]) * eps  # he, she, they
        if direction == ATTRIBUTE_TO_TASK:
            x = x / np.sum(x, axis=0, keepdims=True)
        joint = pd.DataFrame(
            x, index=pd.Index(tasks, name="task"), columns=pd.Index(cols, name="attribute")
        )[list(attributes)]
        prov = {
            "name": self.name,
            "year": 2021,
            "license": "n/a (constructed)",
            "citation": "Wang & Russakovsky (2021), Directional Bias Amplification, ICML; "
            "fit_bert/fit_sentences.py (base_source 0)",
            "url": "https://github.com/princetonvisualai/directional-bias-amp",
            "method": f"{direction}: constant {c!r} +-{eps} by WinoBias group"
            + (", column-normalised" if direction == ATTRIBUTE_TO_TASK else ""),
            "files": [winobias_file_entry()],
            "kind": "constructed",
            "about": "the paper's uniform base (+-1e-7 nudges by WinoBias group)",
        }
        return BaseRateTable(joint, direction=direction, provenance=prov, **PAPER_METRIC)


class Labor2016Wang2021Source(Labor2016Source, registered=True):
    name = "labor-2016-wang2021"
    description = "the paper's labor construction (compat; needs direction)"
    about = "US labor statistics (c. 2015-2017 CPS) as the paper builds them"
    requires_direction = True

    def _table(self, tasks, attributes, direction):
        if direction == ATTRIBUTE_TO_TASK:
            cols = column_normalised(labor_counts(tasks, ["he", "she"], self.name))
            method = "employed*(1-pct/100), employed*(pct/100), column-normalised"
        else:
            cols = labor_shares(tasks, ["he", "she"], self.name)
            method = "[1 - pct/100, pct/100] per occupation (not employment-weighted)"
        joint = select_entries(cols, tasks, attributes, self.name)
        method = f"{direction}: {method} (fit_sentences.py base_source 1)"
        return self._labor_table(joint, method, direction=direction, **PAPER_METRIC)
