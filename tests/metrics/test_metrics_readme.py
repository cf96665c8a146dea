"""The metrics example of the docs (docs/metrics.md) runs and prints what it claims."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_readme_metrics_example_runs():
    section = PAGE.read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    ns: dict = {}
    exec(compile(code, "docs/metrics.md", "exec"), ns)
    r = ns["r"]
    # the comment on the page: 0.0125, 8, 0, 0
    assert (round(r.value, 6), r.n_cells, r.n_ties, r.n_nan) == (0.0125, 8, 0, 0)
    assert list(r.by_pair.columns) == [
        "task",
        "attribute",
        "association",
        "p_base",
        "p_model",
        "delta",
        "contribution",
    ]
    assert 0.010 <= ns["low"] <= ns["high"] <= 0.015
    import biasamp.metrics as m

    names = re.findall(r"^\| `(\w+)`", section, re.M)
    assert len(names) == 7 and all(hasattr(m, name) for name in names), names
