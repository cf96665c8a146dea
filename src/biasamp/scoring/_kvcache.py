"""The key/value cache of a transformers causal LM, across transformers versions: the keyword a
forward pass takes it under, where an output holds it, narrowing it to some rows, and the
model's attention window."""

from __future__ import annotations

__all__ = ["cache_keyword", "cache_of", "select_cache", "sliding_window"]

_LAYERS = ("DynamicLayer", "DynamicSlidingWindowLayer")  # cache layers select_cache copies


def select_cache(cache, index):
    """A new cache holding rows ``index`` of ``cache`` (the original is left as it is).

    A transformers ``DynamicCache`` (full or sliding-window layers; the caller keeps sequences
    shorter than any window) is copied layer by layer and its copy narrowed with the cache's
    own ``batch_select_indices``; a legacy tuple of (key, value) pairs (remote code) is indexed
    directly.
    Returns None for a cache this function does not know (hybrid, quantised, offloaded): the
    caller then does not reuse caches.
    """
    import copy

    if type(cache).__name__ == "DynamicCache" and hasattr(cache, "layers"):
        if not all(type(layer).__name__ in _LAYERS for layer in cache.layers):
            return None
        new = copy.copy(cache)
        new.layers = [copy.copy(layer) for layer in cache.layers]
        new.batch_select_indices(index)
        return new
    if isinstance(cache, tuple) and all(isinstance(kv, tuple) and len(kv) == 2 for kv in cache):
        return tuple((k[index], v[index]) for k, v in cache)
    return None


def cache_keyword(module):
    """The keyword under which ``module.forward`` takes a key/value cache.

    transformers renamed ``past_key_values`` to ``cache`` (5.2x; the old name is deprecated,
    removed in 5.40); the name is read from the signature, so either version works.
    """
    import inspect

    params = inspect.signature(module.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def sliding_window(model):
    """The smallest attention window of ``model`` (None when every layer sees everything)."""
    cfg = model.config
    cfg = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    window = getattr(cfg, "sliding_window", None)
    types = getattr(cfg, "layer_types", None)
    if window is None or (types is not None and not any("sliding" in t for t in types)):
        return None
    return int(window)


def cache_of(out):
    """The key/value cache of a model output (``cache`` in transformers 5.2x, else the old name)."""
    return out["cache"] if "cache" in out else out.past_key_values  # noqa: SIM401 - .get(k, default) would read the default eagerly
