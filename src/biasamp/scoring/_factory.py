"""Picking the scorer for a model: masked or causal, from its config or as forced."""

from __future__ import annotations

from .._validation import OneOf, check
from ._hub import check_model_type, resolve_source

__all__ = ["load_scorer", "resolve_model_type"]

#: Accepted values of ``model_type``.
MODEL_TYPE_CHOICES = ("auto", "masked", "causal")


def resolve_model_type(model, model_type="auto", *, revision=None, hf_cache_dir=None,
                       trust_remote_code=False) -> tuple[str, str]:
    """``(model_type, evidence)`` of ``model`` from its ``config.json`` (no weights loaded).

    ``model_type="auto"`` detects it; ``"masked"``/``"causal"`` force it, and are refused when
    the config says otherwise (a BERT given ``"causal"``).

    Raises
    ------
    BiasampError
        Bad model id or folder, hub errors (see :func:`~biasamp.scoring._hub.resolve_source`),
        a contradicted forced type, or a config that names neither kind under ``"auto"``.
    """
    model_type = check(model_type, OneOf(MODEL_TYPE_CHOICES), "model_type")
    source = resolve_source(model, revision=revision, hf_cache_dir=hf_cache_dir)
    return check_model_type(model_type, model, source=source, trust_remote_code=trust_remote_code)


def load_scorer(model, *, model_type="auto", **kwargs):
    """A :class:`MaskedLMScorer` or :class:`CausalLMScorer` for ``model``.

    Parameters
    ----------
    model : str or path-like
    model_type : {"auto", "masked", "causal"}
        ``"auto"``: from the model's ``config.json`` (see :func:`resolve_model_type`).
    **kwargs
        Passed to the scorer (``device``, ``dtype``, ``batch_size``, ``score_cache``,
        ``hf_cache_dir``, ``allow_missing_weights``, ...).

    Examples
    --------
    >>> load_scorer("./no/such/folder")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: model './no/such/folder': no such folder ...
    """
    kind, _ = resolve_model_type(model, model_type, revision=kwargs.get("revision"),
                                 hf_cache_dir=kwargs.get("hf_cache_dir"),
                                 trust_remote_code=kwargs.get("trust_remote_code", False))
    if kind == "causal":
        from ._causal import CausalLMScorer as cls
    else:
        from ._scorer import MaskedLMScorer as cls
    return cls(model, **kwargs)
