"""On-disk cache of candidate log probabilities (sqlite, JSON values; no pickles).

One database file per scoring configuration (model weights, revision, tokenizer, estimator,
dtype): ``scores-<hash16>.sqlite`` holding a ``meta`` table with the configuration and a
``scores`` table mapping ``sha256(prefix, suffix, candidates)`` to the JSON list of float64 log
probabilities (``json`` writes floats with ``repr``, so values round-trip exactly).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from pathlib import Path

from .._errors import BiasampError

log = logging.getLogger(__name__)

__all__ = ["ScoreCache", "item_key"]


def item_key(prefix, suffix, candidates):
    """Key of one prompt (text around the blank) with its ordered candidate tuple."""
    blob = json.dumps([prefix, suffix, list(candidates)], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ScoreCache:
    """A sqlite file of cached scores for one configuration dict."""

    def __init__(self, folder, config):
        try:
            root = Path(folder).expanduser()
            root.mkdir(parents=True, exist_ok=True)
        except (OSError, TypeError) as exc:
            raise BiasampError(f"score_cache {str(folder)!r} cannot be created: {exc}") from exc
        blob = json.dumps(config, sort_keys=True)
        self.config_hash = hashlib.sha256(blob.encode()).hexdigest()
        self.path = root / f"scores-{self.config_hash[:16]}.sqlite"
        self._con = sqlite3.connect(str(self.path))
        with self._con:
            self._con.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)")
            self._con.execute("CREATE TABLE IF NOT EXISTS scores (k TEXT PRIMARY KEY, v TEXT)")
            self._con.execute("INSERT OR REPLACE INTO meta VALUES ('config', ?)", (blob,))

    def get_many(self, keys):
        """Return ``{key: list of float}`` for the keys present."""
        found = {}
        keys = list(dict.fromkeys(keys))
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            q = f"SELECT k, v FROM scores WHERE k IN ({','.join('?' * len(part))})"
            for k, v in self._con.execute(q, part):
                found[k] = json.loads(v)
        return found

    def put_many(self, items):
        """Store ``(key, sequence of float)`` pairs (one transaction: all or none). A cache
        that cannot be written (a full disk, a read-only folder) is one line naming it."""
        try:
            with self._con:
                self._con.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?)",
                                      [(k, json.dumps([float(x) for x in v]))
                                       for k, v in items])
        except sqlite3.OperationalError as exc:  # "database or disk is full", "readonly"
            raise BiasampError(f"score_cache {str(self.path)!r} cannot be written ({exc}); the "
                               f"{len(self)} scores it holds are kept: free space and rerun "
                               "to reuse them") from exc

    def __len__(self):
        return self._con.execute("SELECT COUNT(*) FROM scores").fetchone()[0]

    def close(self):
        self._con.close()
