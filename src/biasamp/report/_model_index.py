"""The Hugging Face ``model-index`` metadata of a model card (YAML front matter).

One result: task *directional bias amplification*, dataset = the template set, one metric per
base-rate source and direction (the BiasAmp-> value; its CI and direction in ``args``), and the
biasamp version as the source. Built from the report's sections (the summary and the
provenance), so it holds the numbers the card's table shows. The hub reads it with
``huggingface_hub.ModelCard`` / ``metadata_load`` and ``model_index_to_eval_results``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import yaml

from .._conventions import DIRECTION_LABELS
from ..results import Provenance
from ._sections import Section

__all__ = ["SOURCE_URL", "front_matter", "model_index"]

#: Where the biasamp source that measured the numbers is described (the hub needs a URL with a
#: source name).
SOURCE_URL = "https://pypi.org/project/biasamp/"
_TASK_TYPES = {"masked": "fill-mask", "causal": "text-generation"}
_SHORT = {"task_to_attribute": "t2a", "attribute_to_task": "a2t"}


def _number(value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def model_index(sections: Sequence[Section]) -> list[dict]:
    """The ``model-index`` list (one model, one result) of the report's ``sections``."""
    data = {s.key: s.data for s in sections if s.key in ("summary", "provenance")}
    prov, summary = Provenance.model_validate(data["provenance"]), data.get("summary") or []
    templates, version = prov.templates.name, prov.versions.get("biasamp", "")
    metrics = []
    for row in summary:
        value = _number(row.get("mean"))
        if value is None:  # an undefined value has no place in the index (the card says why)
            continue
        direction, source = row["direction"], row["base_rates"]
        args = {"direction": direction, "base_rates": source,
                "ci_low": _number(row.get("ci_low")), "ci_high": _number(row.get("ci_high")),
                "confidence": prov.bootstrap.confidence}
        metrics.append({"type": f"biasamp_{_SHORT.get(direction, direction)}",
                        "name": f"BiasAmp→ {DIRECTION_LABELS.get(direction, direction)} "
                                f"({source})",
                        "value": value, "config": source, "args": args})
    result = {"task": {"type": _TASK_TYPES.get(prov.model.model_type, "text-generation"),
                       "name": "Directional bias amplification (BiasAmp→)"},
              "dataset": {"type": f"biasamp/{templates}", "name": f"biasamp templates "
                          f"{templates}", "config": templates},
              "metrics": metrics,
              "source": {"name": f"biasamp {version}".strip(), "url": SOURCE_URL}}
    return [{"name": prov.model.name, "results": [result]}]


def front_matter(sections: Sequence[Section]) -> str:
    """``---`` + the YAML of ``{"model-index": ...}`` + ``---``: the top of a model card."""
    text = yaml.safe_dump({"model-index": model_index(sections)}, sort_keys=False,
                          allow_unicode=True)
    return f"---\n{text}---\n"
