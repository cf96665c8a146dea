"""The model of a run, resolved once, and the one way to build its scorer.

:func:`resolve_model` checks the id or folder, asks the hub once (or finds the folder), and
reads ``config.json`` once for the kind (masked or causal): a :class:`ResolvedModel`.
:func:`load_scorer` builds the scorer of that kind from it, without resolving again. Nothing
outside :mod:`biasamp.scoring` constructs a scorer class itself (an architecture rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._conventions import MODEL_TYPES
from .._validation import OneOf, check
from ._hub import ModelSource, check_model_type, resolve_source

__all__ = ["ResolvedModel", "load_scorer", "resolve_model", "resolve_model_type"]

#: Accepted values of ``model_type``.


@dataclass(frozen=True)
class ResolvedModel:
    """A model id or folder, resolved: where its files are (``source``), its kind
    (``model_type``: masked or causal) and what said so (``evidence``)."""

    name: str
    source: ModelSource
    model_type: str
    evidence: str
    revision: str | None = None


def resolve_model(model, model_type="auto", *, revision=None, hf_cache_dir=None,
                  trust_remote_code=False) -> ResolvedModel:
    """Resolve ``model`` once (no weights loaded): the id checked, the hub asked once, the
    kind read from ``config.json`` (``"auto"``) or checked against it (``"masked"`` /
    ``"causal"``; a BERT given ``"causal"`` is refused).

    Raises
    ------
    BiasampError
        Bad model id or folder, hub errors (see :func:`~biasamp.scoring._hub.resolve_source`),
        a contradicted forced type, or a config that names neither kind under ``"auto"``.
    """
    if isinstance(model, ResolvedModel):
        return model
    model_type = check(model_type, OneOf(MODEL_TYPES), "model_type")
    source = resolve_source(model, revision=revision, hf_cache_dir=hf_cache_dir)
    kind, evidence = check_model_type(model_type, model, source=source,
                                      trust_remote_code=trust_remote_code)
    return ResolvedModel(str(model), source, kind, evidence, revision)


def resolve_model_type(model, model_type="auto", *, revision=None, hf_cache_dir=None,
                       trust_remote_code=False) -> tuple[str, str]:
    """``(model_type, evidence)`` of ``model`` (:func:`resolve_model`)."""
    r = resolve_model(model, model_type, revision=revision, hf_cache_dir=hf_cache_dir,
                      trust_remote_code=trust_remote_code)
    return r.model_type, r.evidence


def load_scorer(model, *, model_type="auto", **kwargs):
    """A :class:`MaskedLMScorer` or :class:`CausalLMScorer` for ``model``: the one way to build
    a scorer.

    Parameters
    ----------
    model : str, path-like or ResolvedModel
        A :class:`ResolvedModel` is not resolved again.
    model_type : {"auto", "masked", "causal"}
        ``"auto"``: from the model's ``config.json`` (see :func:`resolve_model`).
    **kwargs
        Passed to the scorer (``device``, ``dtype``, ``batch_size``, ``score_cache``,
        ``hf_cache_dir``, ``allow_missing_weights``, ``context_token`` for a causal LM, ...).

    Examples
    --------
    >>> load_scorer("./no/such/folder")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: model './no/such/folder': no such folder ...
    """
    resolved = resolve_model(model, model_type, revision=kwargs.get("revision"),
                             hf_cache_dir=kwargs.get("hf_cache_dir"),
                             trust_remote_code=kwargs.get("trust_remote_code", False))
    if resolved.model_type == "causal":
        from ._causal import CausalLMScorer as cls
    else:
        from ._scorer import MaskedLMScorer as cls
    return cls(resolved, **kwargs)
