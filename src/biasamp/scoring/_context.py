"""The token a causal LM reads before each sentence: a document start, never a chat marker.

A causal LM scores a sentence's first word only after some context. What a model expects at the
start of a plain document is the token its tokenizer puts there itself (Llama's ``<s>``,
Gemma's ``<bos>``), else the document separator it was trained with (GPT-2's, Qwen's and
SmolLM's ``<|endoftext|>``). A chat model's ``bos_token`` or ``eos_token`` can be a chat-turn
marker instead (SmolLM2-Instruct's ``bos_token`` is ``<|im_start|>``, Qwen-Instruct's
``eos_token`` ``<|im_end|>``): after ``<|im_start|>`` the model expects a role name, so every
sentence would be scored as the start of a chat turn, and the task->attribute numbers describe
the marker rather than the model. :func:`choose_context` applies the rule, in this order:

1. a token given by the user (``--context-token``);
2. the special token the tokenizer puts in front of a text itself, unless its name is a turn
   marker;
3. ``bos_token``, then ``eos_token``, unless a chat marker;
4. the first of :data:`DOCUMENT_SEPARATORS` in the vocabulary that is not a chat marker;
5. else an error asking for ``--context-token``.

A *chat marker* is a special token that the tokenizer's chat template writes literally
(``'<|im_start|>'``; a template that writes ``{{ bos_token }}`` does not make the BOS one), or
whose name is a known turn marker (:data:`_TURN_MARKERS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._errors import BiasampError

__all__ = ["Context", "DOCUMENT_SEPARATORS", "chat_markers", "choose_context",
           "model_context"]

#: Document separators looked for in the vocabulary (rule 4), in this order.
DOCUMENT_SEPARATORS = ("<|endoftext|>", "<|end_of_text|>", "<|begin_of_text|>", "<bos>", "<s>",
                       "</s>", "<eos>")
_TURN_MARKERS = re.compile(r"im_start|im_end|start_of_turn|end_of_turn|eot_id|header_id|"
                           r"^\[/?INST\]$|^<\|(user|assistant|system|end)\|>$")


@dataclass(frozen=True)
class Context:
    """The context token (``token``, ``id``), the rule that chose it, and what was passed over."""

    token: str
    id: int
    rule: str
    chat_template: bool
    skipped: tuple[str, ...] = ()

    def to_dict(self):
        return {"context_token": self.token, "context_rule": self.rule,
                "chat_template": self.chat_template, "context_skipped": list(self.skipped)}


def _template_text(tokenizer) -> str:
    tpl = getattr(tokenizer, "chat_template", None)
    if isinstance(tpl, dict):
        return "\n".join(str(v) for v in tpl.values())
    return str(tpl) if tpl else ""


def chat_markers(tokenizer) -> set[str]:
    """Special tokens of ``tokenizer`` that mark chat turns (see the module docstring)."""
    text = _template_text(tokenizer)
    specials = set(tokenizer.all_special_tokens)
    specials |= {t.content for t in getattr(tokenizer, "added_tokens_decoder", {}).values()
                 if getattr(t, "special", False)}
    return {t for t in specials if (text and t in text) or _TURN_MARKERS.search(t)}


def _added_in_front(tokenizer) -> str | None:
    """The special token the tokenizer itself puts before a text, if any."""
    ids = tokenizer("a", add_special_tokens=True)["input_ids"]
    special = set(tokenizer.all_special_ids)
    if ids and ids[0] in special:
        return tokenizer.convert_ids_to_tokens(ids[0])
    return None


def _vocab_id(tokenizer, token):
    """The id of ``token`` when it is one token of the vocabulary, else None."""
    tid = tokenizer.convert_tokens_to_ids(token)
    if tid is None or (tid == tokenizer.unk_token_id and token != tokenizer.unk_token):
        return None
    return int(tid)


def choose_context(tokenizer, requested=None, *, model="model") -> Context:
    """The context token of ``tokenizer`` (see the module docstring).

    Parameters
    ----------
    tokenizer : transformers tokenizer
    requested : str or None
        A token of the vocabulary to use instead of the rule (``--context-token``).
    model : str
        For messages.
    """
    has_template = bool(_template_text(tokenizer))
    if requested is not None:
        tid = _vocab_id(tokenizer, requested)
        if tid is None:
            raise BiasampError(f"context_token {requested!r} is not a token of the vocabulary of "
                               f"model {model!r} (its special tokens: "
                               f"{', '.join(tokenizer.all_special_tokens)})")
        return Context(requested, tid, "given with --context-token", has_template)
    markers = chat_markers(tokenizer)
    skipped = []
    added = _added_in_front(tokenizer)
    candidates = [(added, "added by the tokenizer in front of every text")] if added else []
    candidates += [(tokenizer.bos_token, "the tokenizer's bos_token"),
                   (tokenizer.eos_token, "the tokenizer's eos_token, a document separator")]
    candidates += [(t, "a document separator of the vocabulary") for t in DOCUMENT_SEPARATORS]
    for token, rule in candidates:
        if token is None:
            continue
        tid = _vocab_id(tokenizer, token)
        if tid is None:
            continue
        is_marker = (_TURN_MARKERS.search(token) is not None if rule.startswith("added")
                     else token in markers)
        if is_marker:
            if token not in skipped:
                skipped.append(token)
            continue
        return Context(token, tid, rule, has_template, tuple(skipped))
    raise BiasampError(
        f"model {model!r}: no document-start token found (no BOS or EOS that is not a chat "
        f"marker{', passed over ' + ', '.join(skipped) if skipped else ''}, and none of "
        f"{', '.join(DOCUMENT_SEPARATORS)}); give one with context_token (--context-token)")


def model_context(model, requested=None, *, revision=None, trust_remote_code=False) -> Context:
    """The context token of ``model`` (hub name or folder): its tokenizer, loaded alone (no
    weights), then :func:`choose_context`; what :class:`CausalLMScorer` would put in front.

    Used by the lm-evaluation-harness tasks (:mod:`biasamp.harness`), which put the same token
    in front of every request.
    """
    from ._load import load_tokenizer

    tok = load_tokenizer(model, revision=revision, trust_remote_code=trust_remote_code)
    return choose_context(tok, requested, model=str(model))
