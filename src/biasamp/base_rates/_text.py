"""Text-derived sources: ``wikitext103-valtest`` (shipped co-occurrence counts of WikiText-103
valid+test, a demonstration) and ``bergsma`` (published pronoun shares)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK
from ._file import read_table_csv
from ._table import (
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    data_file,
    file_entry,
    select_entries,
)

__all__ = ["WIKITEXT_VOCABULARIES", "BergsmaSource", "WikiText103Source"]

#: Vocabularies the shipped WikiText-103 counts were computed for, smallest first.
WIKITEXT_VOCABULARIES = ("winobias32", "winobias40", "winogender60")


class BergsmaSource(BaseRateSource):
    """Text-derived pronoun shares of Bergsma & Lin (2006), 60 Winogender occupations.

    joint[t] = [1 - p, p] with p = bergsma_pct_female / 100: shares with no frequency
    weight, so P(T) is uniform over the requested tasks.
    """

    name = "bergsma"
    description = "Bergsma & Lin (2006) pronoun shares, 60 Winogender occupations (P(T) uniform)"

    def _table(self, tasks, attributes, direction):
        path = data_file("winogender_occupations_stats.tsv")
        t = pd.read_csv(path, sep="\t", dtype={"occupation": str}).set_index("occupation")
        she = t["bergsma_pct_female"].astype(float) / 100.
        joint = select_entries(pd.DataFrame({"he": 1. - she, "she": she}), tasks, attributes,
                               self.name)
        prov = {"name": self.name, "year": 2006,
                "citation": "Bergsma & Lin (2006), Bootstrapping Path-Based Pronoun Resolution, "
                            "ACL; via Rudinger et al. (2018) Winogender schemas",
                "url": "https://github.com/rudinger/winogender-schemas",
                "license": "MIT (winogender-schemas)",
                "method": "joint[t] = [1 - bergsma_pct_female/100, bergsma_pct_female/100]; "
                          "rows sum to 1, so P(T) is uniform over the requested tasks",
                "files": [file_entry(path)], "kind": "statistics",
                "about": "pronoun shares of Bergsma & Lin (2006), from web text (P(T) uniform)"}
        return BaseRateTable(joint, provenance=prov)


class WikiText103Source(BaseRateSource):
    """Co-occurrence counts from WikiText-103 **valid + test** (2.4 MB; not the paper's train
    split): a demonstration-size table (62-123 counted sentences), not a base rate to rely on.

    One CSV per (rule, vocabulary): the counts depend on the vocabulary, because a
    sentence mentioning two listed occupations is dropped. ``table`` uses the smallest
    shipped vocabulary that holds every requested task. Tasks never counted give an
    all-zero row: a :class:`ZeroRowWarning` names them (P(A|T) is undefined there).
    Asked for ``direction="attribute_to_task"``, the he/she counts are column-normalised
    (as in the paper's A->T base; the table then records that direction). The table keeps
    its raw counts (:attr:`BaseRateTable.counts`), so the probe can resample them.
    ``wikitext103-valtest-wang2021`` (:mod:`._compat`) reads the counts of the paper's rule.
    """

    name = "wikitext103-valtest"
    description = ("co-occurrence counts (default rule) of WikiText-103 valid+test: "
                   "demonstration only (about 100 sentences)")
    #: Counting rule of the shipped CSVs read (``wikitext103_valtest_<rule>_<vocabulary>.csv``).
    rule = "default"

    def _table(self, tasks, attributes, direction):
        tried = []
        for vocab in WIKITEXT_VOCABULARIES:
            path = data_file(f"wikitext103_valtest_{self.rule}_{vocab}.csv")
            counts, prov0 = read_table_csv(path)
            tried += [t for t in counts.index if t not in tried]
            if all(t in counts.index for t in tasks):
                break
        else:
            missing = [t for t in tasks if t not in tried]
            raise MissingEntriesError(self.name, missing_tasks=missing, tasks=tried,
                                      attributes=("he", "she"))
        raw = select_entries(counts.astype(float), tasks, attributes, self.name)
        joint, transform = raw, "identity"
        method = (f"sentences with exactly one {vocab} occupation and one gender word group "
                  f"({self.rule} rule) in WikiText-103 valid+test")
        if direction == ATTRIBUTE_TO_TASK:
            full = np.ascontiguousarray(
                select_entries(counts.astype(float), tasks, ["he", "she"], self.name).to_numpy())
            full = full / np.sum(full, axis=0, keepdims=True)
            joint = pd.DataFrame(full, index=raw.index,
                                 columns=pd.Index(["he", "she"], name="attribute"))[attributes]
            transform = "column-normalise"
            method += "; column-normalised (A->T)"
        n_kept = int(prov0.get("n_kept", int(counts.to_numpy().sum())))
        prov = {"name": self.name, "year": 2016,
                "citation": "Merity et al. (2016), Pointer Sentinel Mixture Models (WikiText-103)",
                "url": "https://huggingface.co/datasets/Salesforce/wikitext",
                "license": "CC BY-SA 3.0 (WikiText)", "method": method, "vocabulary": vocab,
                "files": [file_entry(path)], "counting": prov0, "kind": "counts",
                "about": (f"co-occurrence counts ({self.rule} rule) of WikiText-103 valid+test "
                          f"(2.4 MB of Wikipedia text): {n_kept} sentences kept"),
                "n_kept": n_kept, "demonstration": True}
        return BaseRateTable(joint, direction=direction, provenance=prov, counts=raw,
                             counts_transform=transform)
