"""The machine-readable report (``report.json``): the ``data`` of the report's sections.

Keys: ``summary`` (as in ``results.json``), ``sign_agreement`` (records: direction,
source_a, source_b, agreement, n_cells), ``mass`` and ``provenance``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ._sections import Section

__all__ = ["JSON_KEYS", "json_report"]

#: The keys of ``report.json``, each the ``data`` of the section of that key.
JSON_KEYS = ("summary", "sign_agreement", "mass", "provenance")


def json_report(sections: Sequence[Section]) -> str:
    """``report.json``'s text (indented, NaN written as ``null``)."""
    data = {s.key: s.data for s in sections if s.key in JSON_KEYS}
    return json.dumps({k: data.get(k) for k in JSON_KEYS}, indent=2, allow_nan=False) + "\n"
