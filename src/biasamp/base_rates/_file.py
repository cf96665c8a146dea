"""Tables read from CSV files: the user's ``file:PATH.csv`` and the shipped text-derived
``wikitext103-valtest`` (counts, a demonstration) and ``bergsma`` (pronoun shares)."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import numpy as np
import pandas as pd

from .._conventions import ATTRIBUTE_TO_TASK
from .._errors import BiasampError
from .._files import json_loads, read_text, sha256_file
from ._table import (
    PAPER_METRIC,
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    column_normalised,
    data_file,
    file_entry,
    select_entries,
)


def _read_header_comments(lines: list[str], csv_where: str) -> tuple[int, dict]:
    """Index of the first line after the leading comments; the ``# provenance:`` JSON."""
    prov: dict = {}
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        line = lines[i].lstrip("#").strip()
        if line.startswith("provenance:"):
            where = f"{csv_where}, line {i + 1} ('# provenance:')"
            prov = json_loads(line[len("provenance:") :], where)
            if not isinstance(prov, dict):
                raise BiasampError(
                    f'{where} must hold a JSON object ({{"key": value, ...}}); '
                    f"got {type(prov).__name__} {line[len('provenance:') :].strip()}"
                )
            n_kept = prov.get("n_kept", 0)
            if isinstance(n_kept, bool) or not isinstance(n_kept, int) or n_kept < 0:
                raise BiasampError(
                    f"{where}: n_kept must be a non-negative integer (the "
                    f"sentences counted); got {n_kept!r}"
                )
        i += 1
    return i, prov


def _numeric(df: pd.DataFrame, cols, where: str) -> None:
    for c in cols:
        vals = pd.to_numeric(df[c], errors="coerce")
        for mask, what in (
            (vals.isna() | ~np.isfinite(vals.fillna(0)), "numeric"),
            (vals < 0, "non-negative"),
        ):
            bad = df.loc[mask, ["task", c]]
            if len(bad):
                raise BiasampError(
                    f"{where}: column {c!r} must be {what}; got {list(zip(bad['task'], bad[c]))[:5]}"
                )
        df[c] = vals.astype(float)


def _long_joint(df: pd.DataFrame, value_cols: list[str], where: str) -> tuple[pd.DataFrame, str]:
    """Joint of a long table (task, attribute, count|probability); every pair present."""
    if len(value_cols) != 1 or len(df.columns) != 3:
        raise BiasampError(
            f"long {where} must have exactly the columns task,attribute and one of "
            f"count|probability; got {list(df.columns)}"
        )
    vcol = value_cols[0]
    _numeric(df, [vcol], where)
    dup = df[df.duplicated(["task", "attribute"], keep=False)]
    if len(dup):
        pairs = sorted(set(zip(dup["task"], dup["attribute"])))
        raise BiasampError(f"{where} has duplicate (task, attribute) rows: {pairs}")
    tasks = list(dict.fromkeys(df["task"]))
    attrs = list(dict.fromkeys(df["attribute"]))
    joint = df.pivot(index="task", columns="attribute", values=vcol).reindex(
        index=tasks, columns=attrs
    )
    if joint.isna().any().any():
        miss = [(t, a) for t in tasks for a in attrs if pd.isna(joint.loc[t, a])]
        raise BiasampError(
            f"long {where} lacks (task, attribute) pairs {miss} (every pair needs a row; "
            "write 0 for none)"
        )
    return joint.astype(float), vcol


def _wide_joint(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Joint of a wide table (task, ATTR1, ATTR2, ...); one row per task."""
    attrs = [c for c in df.columns if c != "task"]
    if not attrs:
        raise BiasampError(
            f"wide {where} needs attribute columns after 'task'; got {list(df.columns)}"
        )
    _numeric(df, attrs, where)
    dup = sorted(set(df.loc[df["task"].duplicated(), "task"]))
    if dup:
        raise BiasampError(f"{where} has duplicate task rows: {dup}")
    return df.set_index("task")[attrs].astype(float)


def read_table_csv(path) -> tuple[pd.DataFrame, dict]:
    """A base-rate CSV (wide or long; schema: ``base_rates/README.md``) as (joint, provenance)."""
    path = Path(path)
    if not path.is_file():
        raise BiasampError(f"base-rate CSV not found: {str(path)!r}")
    where = f"base-rate CSV {str(path)!r}"
    lines = read_text(path, "base-rate CSV", "utf-8-sig").splitlines(keepends=True)
    start, prov = _read_header_comments(lines, where)
    body = "".join(lines[start:])
    if not body.strip():
        raise BiasampError(f"{where} is empty (no header and rows)")
    try:
        df = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise BiasampError(f"{where} cannot be parsed: {exc}") from None
    header = [c.strip() for c in next(csv.reader(io.StringIO(body.lstrip("\n"))))]
    if len(set(header)) != len(header):
        raise BiasampError(f"{where} has duplicate columns: {header}")
    df.columns = [str(c).strip() for c in df.columns]
    if "task" not in df.columns:
        raise BiasampError(
            f"{where} needs a 'task' column; got columns {list(df.columns)} (wide: "
            "task,he,she,...; long: task,attribute,count|probability)"
        )
    if df.empty:
        raise BiasampError(f"{where} has a header but no rows")
    df = df.apply(lambda column: column.str.strip())  # every value read as a string
    if "attribute" in df.columns:
        value_cols = [c for c in ("count", "probability") if c in df.columns]
        joint, vcol = _long_joint(df, value_cols, where)
        prov.setdefault("value", vcol)
    else:
        joint = _wide_joint(df, where)
    if "" in joint.index:
        raise BiasampError(f"{where} has a row with an empty task name")
    return joint.rename_axis(index="task", columns="attribute"), prov


#: A count table with fewer kept sentences than this is flagged as demonstration-size.
DEMONSTRATION_BELOW = 1000


class FileSource(BaseRateSource):
    def __init__(self, path):
        self.path = Path(path)
        self.name = f"file:{path}"
        self.description = f"user table {path}"
        self._joint, self._prov = read_table_csv(self.path)

    def _table(self, tasks, attributes, direction):
        joint = select_entries(self._joint, tasks, attributes, self.name)
        prov = {
            "name": self.name,
            "year": None,
            "license": "user-supplied",
            "method": "read from a user CSV",
            "files": [
                {"name": self.path.name, "path": str(self.path), "sha256": sha256_file(self.path)}
            ],
            "file_provenance": self._prov,
        }
        prov.update(
            {k: self._prov[k] for k in ("citation", "url", "year", "license") if k in self._prov}
        )
        p = self._prov  # counts, not probabilities: docs/probing.md (`biasamp count` writes both)
        if p.get("value") != "count" and not ("n_kept" in p and "rule" in p):
            prov.update(
                kind="user",
                about=f"user table of probabilities/weights {self.path.name} (treated as fixed)",
            )
            return BaseRateTable(joint, provenance=prov)
        n_kept = int(self._prov.get("n_kept", self._joint.to_numpy().sum()))
        corpus = self._prov.get("corpus")
        corpus = corpus.get("name") if isinstance(corpus, dict) else None
        rule = self._prov.get("rule")
        prov.update(
            kind="counts",
            n_kept=n_kept,
            demonstration=n_kept < DEMONSTRATION_BELOW,
            about=(
                f"co-occurrence counts{f' ({rule} rule)' if rule else ''}"
                f"{f' of {corpus}' if corpus else ''} in {self.path.name}: "
                f"{n_kept} sentences kept"
            ),
        )
        return BaseRateTable(joint, provenance=prov, counts=joint.copy())


#: Vocabularies the shipped WikiText-103 counts were computed for, smallest first.
WIKITEXT_VOCABULARIES = ("winobias32", "winobias40", "winogender60")


class BergsmaSource(BaseRateSource, registered=True):
    name = "bergsma"
    description = "Bergsma & Lin (2006) pronoun shares, 60 Winogender occupations (P(T) uniform)"

    def _table(self, tasks, attributes, direction):
        path = data_file("winogender_occupations_stats.tsv")
        t = pd.read_csv(path, sep="\t", dtype={"occupation": str}).set_index("occupation")
        she = t["bergsma_pct_female"].astype(float) / 100.0
        joint = select_entries(
            pd.DataFrame({"he": 1.0 - she, "she": she}), tasks, attributes, self.name
        )
        prov = {
            "name": self.name,
            "year": 2006,
            "citation": "Bergsma & Lin (2006), Bootstrapping Path-Based Pronoun Resolution, "
            "ACL; via Rudinger et al. (2018) Winogender schemas",
            "url": "https://github.com/rudinger/winogender-schemas",
            "license": "MIT (winogender-schemas)",
            "method": "joint[t] = [1 - bergsma_pct_female/100, bergsma_pct_female/100]; "
            "rows sum to 1, so P(T) is uniform over the requested tasks",
            "files": [file_entry(path)],
            "kind": "statistics",
            "about": "pronoun shares of Bergsma & Lin (2006), from web text (P(T) uniform)",
        }
        return BaseRateTable(joint, provenance=prov)


class WikiText103Source(BaseRateSource, registered=True):
    name = "wikitext103-valtest"
    description = (
        "co-occurrence counts (default rule) of WikiText-103 valid+test: "
        "demonstration only (about 100 sentences)"
    )
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
            raise MissingEntriesError(
                self.name, missing_tasks=missing, tasks=tried, attributes=("he", "she")
            )
        raw = select_entries(counts.astype(float), tasks, attributes, self.name)
        joint, transform = raw, "identity"
        method = (
            f"sentences with exactly one {vocab} occupation and one gender word group "
            f"({self.rule} rule) in WikiText-103 valid+test"
        )
        if direction == ATTRIBUTE_TO_TASK:
            full = select_entries(counts.astype(float), tasks, ["he", "she"], self.name)
            joint = column_normalised(full)[attributes]
            transform = "column-normalise"
            method += "; column-normalised (A->T)"
        n_kept = int(prov0.get("n_kept", int(counts.to_numpy().sum())))
        prov = {
            "name": self.name,
            "year": 2016,
            "citation": "Merity et al. (2016), Pointer Sentinel Mixture Models (WikiText-103)",
            "url": "https://huggingface.co/datasets/Salesforce/wikitext",
            "license": "CC BY-SA 3.0 (WikiText)",
            "method": method,
            "vocabulary": vocab,
            "files": [file_entry(path)],
            "counting": prov0,
            "kind": "counts",
            "about": (
                f"co-occurrence counts ({self.rule} rule) of WikiText-103 valid+test "
                f"(2.4 MB of Wikipedia text): {n_kept} sentences kept"
            ),
            "n_kept": n_kept,
            "demonstration": True,
        }
        return BaseRateTable(
            joint, direction=direction, provenance=prov, counts=raw, counts_transform=transform
        )


class WikiText103Wang2021Source(WikiText103Source, registered=True):
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
