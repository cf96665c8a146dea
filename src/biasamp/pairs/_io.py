"""The files of a pairs run: the pairs read (shipped or a user's file) and ``pairs.json``."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd

from .._errors import BiasampError
from .._files import data_dir, decode_text, json_loads, read_text, sha256_bytes
from .._registry import Registry
from .._schema import (
    FileModel,
    Int,
    ModelInfo,
    Num,
    ScorerInfo,
    Str,
    check_version,
    jsonable,
    parse,
)
from .._validation import Optional, PositiveInt, check

#: Values of the direction column (Nangia et al. 2020).
DIRECTIONS = ("stereo", "antistereo")
#: lm-evaluation-harness' crows_pairs metrics, in the summary rows of a causal LM only.
LM_EVAL_KEYS = ("pct_stereotype", "likelihood_diff")
#: Columns of :attr:`PairSet.pairs`.
PAIR_COLUMNS = ("pair_id", "sent_more", "sent_less", "direction", "bias_type")
DEFAULT_COLUMNS = {
    "more": "sent_more",
    "less": "sent_less",
    "direction": "stereo_antistereo",
    "bias_type": "bias_type",
}


#: Shipped pair sets: name -> file.
PAIR_SETS = Registry("pair set", extra_names=("PATH.csv", "PATH.json"))
PAIR_SETS.register(
    "crows-pairs",
    data_dir("pairs") / "crows_pairs_anonymized.csv",
    description="CrowS-Pairs (Nangia et al. 2020): 1,508 pairs, 9 bias types (CC BY-SA 4.0)",
)


@dataclass(frozen=True)
class PairSet:
    """Sentence pairs (``pairs``: :data:`PAIR_COLUMNS`, ``""`` for a column the file lacks)
    with their provenance (file, sha256, ``n_pairs``, the columns read, the selection)."""

    name: str
    pairs: pd.DataFrame = field(repr=False)
    provenance: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.pairs)

    def select(self, *, bias_types=None, max_pairs: int | None = None) -> PairSet:
        """The pairs of some bias types (in file order), at most ``max_pairs`` of them."""
        check(max_pairs, Optional(PositiveInt), "max_pairs")
        df = self.pairs
        if bias_types:
            known = sorted(set(df["bias_type"]))
            bad = [b for b in bias_types if b not in known]
            if bad:
                raise BiasampError(f"bias_types must be some of {known}; got {bad}")
            df = df[df["bias_type"].isin(list(bias_types))]
        if max_pairs is not None:
            df = df.iloc[:max_pairs]
        prov = {
            **self.provenance,
            "selected": {"bias_types": list(bias_types or []), "max_pairs": max_pairs},
            "n_pairs": len(df),
        }
        return PairSet(self.name, df.reset_index(drop=True), prov)


def list_pair_sets() -> list[str]:
    """Names of the shipped pair sets."""
    return sorted(PAIR_SETS.names())


def _records(path: Path, data: bytes, where: str) -> list[dict]:
    text = decode_text(data, path, "pairs", "utf-8-sig")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        rows = list(csv.DictReader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ","))
        long = [n for n, r in enumerate(rows, 2) if None in r]
        if long:
            raise BiasampError(f"{where}: row {long[0]} has more fields than the header")
        return rows
    if suffix == ".jsonl":
        recs = [json_loads(line, where) for line in text.splitlines() if line.strip()]
    elif suffix == ".json":
        recs = json_loads(text, where)
        recs = recs.get("pairs") if isinstance(recs, dict) else recs
    else:
        raise BiasampError(f"{where} must end in .csv, .tsv, .json or .jsonl")
    if not isinstance(recs, list) or not all(isinstance(r, dict) for r in recs):
        raise BiasampError(f'{where} must hold a list of objects (or {{"pairs": [...]}})')
    return recs


def _column(given, key: str, header: list, *, where: str, required: bool):
    name = given if given is not None else (DEFAULT_COLUMNS | {"pair_id": ""}).get(key)
    if name is None or name in header:
        return name
    if given is None and not required:
        return None
    raise BiasampError(
        f"{where} lacks the column {name!r} (it has: {header}); name the "
        f"{key} column with --{key.replace('_', '-')}-column (Python: {key}=)"
    )


def load_pairs(
    spec,
    *,
    more: str | None = None,
    less: str | None = None,
    direction: str | None = None,
    bias_type: str | None = None,
    pair_id: str | None = None,
) -> PairSet:
    """Load sentence pairs from a shipped name (``"crows-pairs"``) or a file.

    Parameters
    ----------
    spec
        A shipped name, a CSV/TSV/JSON/JSONL file or a PairSet.
    more, less, direction, bias_type, pair_id
        Column names (docs/benchmark-sentences.md has the defaults); ``direction``, ``bias_type``
        and ``pair_id`` are optional unless named.

    Returns
    -------
    PairSet

    Examples
    --------
    >>> p = load_pairs("crows-pairs")
    >>> len(p), p.pairs.loc[1, "bias_type"], p.pairs.loc[1, "direction"]
    (1508, 'socioeconomic', 'stereo')
    """
    if isinstance(spec, PairSet):
        return spec
    if isinstance(spec, str) and spec in PAIR_SETS:
        path, name = Path(PAIR_SETS.get(spec)), spec
    else:
        path = Path(os.fspath(spec)).expanduser()
        if not path.is_file():
            if isinstance(spec, str) and path.suffix == "":
                PAIR_SETS.get(spec)  # unknown name: "did you mean"
            raise BiasampError(f"pairs: file not found: {str(path)!r}")
        name = path.stem
    data = path.read_bytes()
    where = f"pairs file {str(path)!r}"
    recs = _records(path, data, where)
    if not recs:
        raise BiasampError(f"{where} holds no pairs")
    header = list(recs[0])
    given = {"more": more, "less": less, "direction": direction, "bias_type": bias_type}
    cols = {  # pair_id: CrowS-Pairs' unnamed first column by default, else the row number
        key: _column(col, key, header, where=where, required=key in ("more", "less"))
        for key, col in (given | {"pair_id": pair_id}).items()
    }
    id_col = cols["pair_id"]
    rows = []
    for n, rec in enumerate(recs, 1):
        out = {"pair_id": str(rec.get(id_col, "")).strip() if id_col is not None else str(n)}
        # a column not read (None) is "" for every pair
        out |= {k: str(rec.get(cols[k], "")).strip() for k in ("direction", "bias_type")}
        for key in ("more", "less"):
            value = rec.get(cols[key])
            if not isinstance(value, str) or not value.strip():
                raise BiasampError(
                    f"{where}: pair {n}: {cols[key]} must be a non-empty sentence; got {value!r}"
                )
            out[f"sent_{key}"] = value
        if out["sent_more"].strip() == out["sent_less"].strip():
            raise BiasampError(
                f"{where}: pair {n}: {cols['more']} and {cols['less']} are the same sentence "
                f"({out['sent_more']!r}); a pair compares two different sentences"
            )
        if cols["direction"] and out["direction"] not in DIRECTIONS:
            raise BiasampError(
                f"{where}: pair {n}: {cols['direction']} must be one of "
                f"{list(DIRECTIONS)}; got {out['direction']!r}"
            )
        rows.append(out)
    df = pd.DataFrame(rows, columns=list(PAIR_COLUMNS))
    dup = df["pair_id"][df["pair_id"].duplicated()].tolist()
    if dup:
        raise BiasampError(f"{where}: pair ids {dup[:5]} occur more than once")
    prov = {
        "name": name,
        "file": path.name,
        "sha256": sha256_bytes(data),
        "n_pairs": len(df),
        "columns": cols,
    }
    return PairSet(name, df, prov)


#: The layout of ``pairs.json``; bumped when it changes (an older file is re-run).
PAIRS_SCHEMA_VERSION = 2


class PairsBootstrap(FileModel):
    """The percentile bootstrap over the pairs of each group."""

    n_resamples: Int
    seed: Int
    confidence: Num
    method: Str


class PairsProvenance(FileModel):
    """Everything behind a pairs result (docs/benchmark-sentences.md, docs/pairs-and-qwen.md)."""

    model: ModelInfo
    scorer: ScorerInfo
    pairs: dict[str, Any]
    bootstrap: PairsBootstrap
    n_contexts: Int
    n_contexts_run: Int
    forward_calls: Int
    versions: dict[str, Str]
    platform: Str
    timestamp: Str


class PairSummaryRow(FileModel):
    """One group of pairs: all, a direction or a bias type."""

    group: Str
    kind: Literal["all", "direction", "bias_type"]
    n_pairs: Int
    n_neutral: Int
    share_more: Num | None
    ci_low: Num | None
    ci_high: Num | None
    share_more_excluding_neutral: Num | None
    pct_stereotype: Num | None = None
    likelihood_diff: Num | None = None

    optional_keys: ClassVar[tuple[str, ...]] = LM_EVAL_KEYS


class PairsFile(FileModel):
    """``pairs.json``: the summary and the provenance of a pairs run."""

    format: Literal["biasamp-pairs/1"]
    schema_version: Literal[PAIRS_SCHEMA_VERSION]
    summary: list[PairSummaryRow]
    provenance: PairsProvenance


def write_pairs_json(path: Path, summary: pd.DataFrame, provenance: PairsProvenance) -> None:
    """Write ``pairs.json`` (NaN as null)."""
    doc = {
        "format": "biasamp-pairs/1",
        "schema_version": PAIRS_SCHEMA_VERSION,
        "summary": jsonable(summary.to_dict(orient="records")),
        "provenance": jsonable(provenance.model_dump(mode="json")),
    }
    path.write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def read_pairs_json(path: Path) -> tuple[pd.DataFrame, PairsProvenance]:
    """The summary and provenance of ``pairs.json``, checked."""
    data = json_loads(read_text(path, "pairs result"), str(path))
    check_version(
        data, str(path), version=PAIRS_SCHEMA_VERSION, name="pairs.json", again="`biasamp pairs`"
    )
    doc = parse(PairsFile, data, str(path), "pairs.json")
    causal = doc.provenance.model.model_type == "causal"
    for i, row in enumerate(doc.summary):  # the harness's metrics: a causal LM's rows only
        if causal != (set(LM_EVAL_KEYS) <= row.model_fields_set):
            what = "lacks" if causal else "must not hold"
            raise BiasampError(
                f"{path}: summary[{i}] {what} the keys {list(LM_EVAL_KEYS)} (lm-eval's "
                "metrics, those of a causal language model's pairs)"
            )
    rows = [r.model_dump(exclude_unset=True) for r in doc.summary]
    summary = pd.DataFrame(
        rows, columns=[c for c in PairSummaryRow.model_fields if rows and c in rows[0]]
    )
    return summary, doc.provenance
