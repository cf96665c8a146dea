"""Where a probe writes: a folder name per model, and the output folder of a run.

>>> model_slug("a/b")
'a--b'
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .._errors import BiasampError
from .._output import OutputFolder

__all__ = ["model_folders", "model_slug", "result_output"]


def model_slug(model: str) -> str:
    """A folder-safe name for a model id or path.

    >>> model_slug("google/bert_uncased_L-2_H-128_A-2")
    'google--bert_uncased_L-2_H-128_A-2'
    >>> model_slug("/tmp/models/tiny-bert/")
    'tiny-bert'
    """
    text = str(model).rstrip("/\\")
    if os.path.isabs(text) or text.startswith((".", "~")):
        text = Path(text).name
    slug = "".join(c if (c.isalnum() or c in "-_.") else "-" for c in text.replace("/", "--"))
    return slug.strip(".") or "model"


def model_folders(models) -> dict[str, str]:
    """A distinct sub-folder name per model (the same model twice is an error).

    >>> model_folders(["a/tiny-bert", "b/tiny-bert", "bert-base-uncased"])
    {'a/tiny-bert': 'a--tiny-bert', 'b/tiny-bert': 'b--tiny-bert', 'bert-base-uncased': 'bert-base-uncased'}
    """
    seen: dict[str, str] = {}
    for m in models:
        key = os.path.realpath(os.path.expanduser(m)) if os.path.exists(
            os.path.expanduser(m)) else m
        if key in seen:
            raise BiasampError(f"models names the same model twice: {seen[key]!r} and {m!r}")
        seen[key] = m
    slugs = {m: model_slug(m) for m in models}
    out = {}
    for m in models:
        slug = slugs[m]
        if list(slugs.values()).count(slug) > 1:  # e.g. two local folders named tiny-bert
            parts = Path(os.path.expanduser(m).rstrip("/\\")).parts
            slug = model_slug("/".join(parts[-2:]) if len(parts) > 1 else m)
            if list(out.values()).count(slug) or slug in slugs.values():
                slug = f"{slug}-{hashlib.sha256(m.encode()).hexdigest()[:8]}"
        out[m] = slug
    if len(set(out.values())) != len(out):
        out = {m: f"{s}-{hashlib.sha256(m.encode()).hexdigest()[:8]}" for m, s in out.items()}
    return out


def result_output(out, *, overwrite: bool, score_cache: str | None) -> OutputFolder | None:
    """The output folder of a probe (None without ``out``), checked before any long work; a
    failed write says what became of the scores."""
    if not out:
        return None
    note = (f"the scores are kept in the score cache {score_cache!r}: a rerun reuses them"
            if score_cache else "the scores were not kept: rerun with --score-cache DIR so "
            "that a failed write does not lose them")
    output = OutputFolder(out, kind="probe", overwrite=overwrite, failure_note=note)
    output.check()
    return output
