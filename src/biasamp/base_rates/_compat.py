"""Every paper-compatible (``wang2021``) construction of ``fit_bert/fit_sentences.py``, bit for
bit (C-ordered numpy sums, the paper's order of operations), with the paper's metric settings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK, ATTRIBUTES
from ._file import WikiText103Source
from ._table import BaseRateSource, BaseRateTable, MissingEntriesError, select_entries
from ._winobias import (
    LABOR2016_PROVENANCE,
    groups_for,
    labor2016_files,
    labor_counts,
    labor_shares,
    winobias_file_entry,
)

__all__ = [
    "COMPAT_SOURCES",
    "EPS_WANG2021",
    "PAPER_METRIC",
    "Labor2016Wang2021Source",
    "UniformWang2021Source",
    "WikiText103Wang2021Source",
]

#: The nudge of the paper's uniform base.
EPS_WANG2021 = 1e-7

#: Metric settings every compat table carries (see :class:`BaseRateTable`).
PAPER_METRIC = {"tie_tol": 0.0, "undefined": "tie"}

#: compat mode -> {plain source: its paper-compatible construction}.
COMPAT_SOURCES = {
    "wang2021": {
        "uniform": "uniform-wang2021",
        "labor-2016": "labor-2016-wang2021",
        "wikipedia": "wikitext103-valtest-wang2021",
    }
}


class UniformWang2021Source(BaseRateSource):
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
        eps = EPS_WANG2021
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


class Labor2016Wang2021Source(BaseRateSource):
    name = "labor-2016-wang2021"
    description = "the paper's labor construction (compat; needs direction)"
    requires_direction = True

    def _table(self, tasks, attributes, direction):
        if direction == ATTRIBUTE_TO_TASK:
            cols = labor_counts(tasks, ["he", "she"], self.name)
            x = np.ascontiguousarray(cols.to_numpy())  # C order: same sums as the paper
            cols = pd.DataFrame(x / np.sum(x, axis=0, keepdims=True), cols.index, cols.columns)
            method = "employed*(1-pct/100), employed*(pct/100), column-normalised"
        else:
            cols = labor_shares(tasks, ["he", "she"], self.name)
            method = "[1 - pct/100, pct/100] per occupation (not employment-weighted)"
        joint = select_entries(cols, tasks, attributes, self.name)
        prov = {
            "name": self.name,
            **LABOR2016_PROVENANCE,
            "files": labor2016_files(),
            "method": f"{direction}: {method} (fit_sentences.py base_source 1)",
            "kind": "statistics",
            "about": "US labor statistics (c. 2015-2017 CPS) as the paper builds them",
        }
        return BaseRateTable(joint, direction=direction, provenance=prov, **PAPER_METRIC)


class WikiText103Wang2021Source(WikiText103Source):
    # the paper's "Wikipedia" row, counted on WikiText-103 train there, here on valid+test only

    name = "wikitext103-valtest-wang2021"
    description = (
        "co-occurrence counts (wang2021 rule) of WikiText-103 valid+test "
        "(compat; needs direction; demonstration only)"
    )
    rule = "wang2021"
    requires_direction = True

    def _table(self, tasks, attributes, direction):
        return dataclasses.replace(super()._table(tasks, attributes, direction), **PAPER_METRIC)
