"""CausalLMScorer: candidate scoring with a decoder-only (causal) Hugging Face language model,
and the token it reads before each sentence (:func:`choose_context`)."""

from __future__ import annotations

import logging
import re
import warnings
from dataclasses import dataclass

import numpy as np

from .._errors import BiasampError, ChatModelWarning
from .._validation import Bool, NonEmptyStr, Optional, check
from ._base import BaseScorer
from ._causal_engine import CausalRunner, plan_splits
from ._spans import locate_spans

log = logging.getLogger(__name__)


class CausalLMScorer(BaseScorer):
    """Score candidate fillers of a blank with a causal (decoder-only) language model: each
    filled sentence scored left to right after a document-start token (docs/scoring.md).

    Parameters
    ----------
    model : str or path-like
        Hugging Face hub name (``"gpt2"``) or local folder; a chat model is scored as a plain LM.
    options, progress, chunk_size
        As for :class:`MaskedLMScorer`.
    share_prefix : bool
        Run each shared prefix once and reuse its key/value cache (off when a load-time
        self-check finds the cache cannot be reused).
    context_token : str or None
        The token read before every sentence; None: :func:`choose_context`'s.
    """

    model_type = "causal"
    count_unit = "seq"

    def __init__(self, model, options=None, *, share_prefix=True, context_token=None, **kwargs):
        share_prefix = check(share_prefix, Bool, "share_prefix")
        context_token = check(context_token, Optional(NonEmptyStr), "context_token")
        super().__init__(model, options, **kwargs)
        self.context = choose_context(self.tokenizer, context_token, model=self.model_name)
        self.context_id = self.context.id
        if self.context.chat_template:
            warnings.warn(
                ChatModelWarning(
                    f"model {self.model_name!r} has a chat template: it is probed as a plain "
                    f"language model, each sentence scored as text after the context token "
                    f"{self.context.token!r} ({self.context.rule}), not inside a chat turn; the "
                    "numbers describe how it continues text, not what it answers in a conversation"
                ),
                stacklevel=2,
            )
        self._runner = CausalRunner(self.model, device=self.device, batch_size=self.batch_size)
        import torch

        atol = 1e-3 if self.dtype == torch.float32 else 0.25  # half precision: looser
        vocab = int(self.model.get_input_embeddings().weight.shape[0])
        probe_ids = [self.context_id] + [(17 * j + 3) % vocab for j in range(8)]
        self.head_split, ok = self._runner.check(probe_ids, atol=atol)
        self.share_prefix = bool(share_prefix and ok)
        if share_prefix and not ok:
            log.info(
                "model %s: key/value cache reuse is off (self-check failed); every filled "
                "sentence runs whole",
                self.model_name,
            )

    def _cache_key(self):
        return {"context_token_id": self.context_id}

    def _extra_provenance(self):
        return {
            **self.context.to_dict(),
            "share_prefix": self.share_prefix,
            "head_split": self.head_split,
        }

    def sequences(self, rows, mode):
        """``(token ids, first scored position)`` of each row: the context token first; the
        candidate's first piece (``continuation``) or the token after the context (``sentence``)."""
        out = []
        for (_, _, _, prompt, cand), sp in zip(rows, locate_spans(self.tokenizer, rows)):
            ids, start = list(sp.ids), sp.start
            while ids and ids[-1] in self._special_ids and len(ids) > sp.end:
                ids.pop()  # an EOS the tokenizer appends is not part of the sentence
            lead = 0
            while lead < start and ids[lead] in self._special_ids:
                lead += 1  # what the tokenizer put in front: replaced by the context token
            ids = [self.context_id] + ids[lead:]
            start, lead = start - lead + 1, 1
            if len(ids) > self.max_length:
                raise BiasampError(
                    f"prompt {prompt!r} filled with {cand!r} is {len(ids)} tokens long (with the "
                    f"context token); the model accepts at most {self.max_length}"
                )
            out.append((tuple(ids), lead if mode == "sentence" else start))
        return out

    def _count_rows(self, mode, rows):
        return len({ids for ids, _ in self.sequences(rows, mode)})

    def _score_rows(self, mode, rows, on_batch):
        return self._run_cells(self.sequences(rows, mode))

    def score_sentences(self, texts) -> np.ndarray:
        """The natural-log likelihood of each whole text after the context token (CrowS-Pairs on
        a causal LM: lm-evaluation-harness' ``loglikelihood`` after an empty context)."""
        return self._run_cells(self.sequences(_whole(texts), "sentence"))

    def count_sentences(self, texts) -> int:
        """How many distinct sequences :meth:`score_sentences` runs; nothing is run."""
        return len({ids for ids, _ in self.sequences(_whole(texts), "sentence")})

    def _run_cells(self, cells) -> np.ndarray:
        """The summed log probabilities of each ``(sequence, first scored position)`` cell, each
        distinct sequence run once."""
        earliest: dict[tuple, int] = {}
        for ids, f in cells:
            earliest[ids] = min(earliest.get(ids, f), f)
        seqs, first = list(earliest), list(earliest.values())
        index = {ids: i for i, ids in enumerate(seqs)}
        calls = self._runner.n_forward_calls
        window = self._runner.window  # a sliding-window cache keeps only the last tokens
        share = self.share_prefix and (window is None or max(map(len, seqs), default=0) < window)
        lp = self._runner.run(
            seqs, first, plan_splits(seqs, share=share), on_batch=self.progress.advance
        )
        self.n_forward_calls += self._runner.n_forward_calls - calls
        return np.array([lp[index[ids]][f:].sum() for ids, f in cells])


def _whole(texts):
    """Rows of :meth:`CausalLMScorer.sequences` whose candidate is the whole text."""
    return [(t, 0, len(t), t, "the whole sentence") for t in texts]


#: Document separators looked for in the vocabulary, in this order.
DOCUMENT_SEPARATORS = (
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|begin_of_text|>",
    "<bos>",
    "<s>",
    "</s>",
    "<eos>",
)
_TURN_MARKERS = re.compile(
    r"im_start|im_end|start_of_turn|end_of_turn|eot_id|header_id|"
    r"^\[/?INST\]$|^<\|(user|assistant|system|end)\|>$"
)


@dataclass(frozen=True)
class Context:
    """The context token, the rule that chose it, and the chat markers passed over."""

    token: str
    id: int
    rule: str
    chat_template: bool
    skipped: tuple[str, ...] = ()

    def to_dict(self):
        return {
            "context_token": self.token,
            "context_rule": self.rule,
            "chat_template": self.chat_template,
            "context_skipped": list(self.skipped),
        }


def _template_text(tokenizer) -> str:
    tpl = getattr(tokenizer, "chat_template", None)
    if isinstance(tpl, dict):
        return "\n".join(str(v) for v in tpl.values())
    return str(tpl) if tpl else ""


def chat_markers(tokenizer) -> set[str]:
    """Special tokens that mark chat turns: written literally by the chat template
    (``{{ bos_token }}`` does not count), or named as a turn marker."""
    text = _template_text(tokenizer)
    specials = set(tokenizer.all_special_tokens)
    specials |= {
        t.content
        for t in getattr(tokenizer, "added_tokens_decoder", {}).values()
        if getattr(t, "special", False)
    }
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
    """The token a causal LM reads before each sentence: a document start, never a chat marker
    (the rule: docs/scoring.md).

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
            raise BiasampError(
                f"context_token {requested!r} is not a token of the vocabulary of "
                f"model {model!r} (its special tokens: "
                f"{', '.join(tokenizer.all_special_tokens)})"
            )
        return Context(requested, tid, "given with --context-token", has_template)
    markers = chat_markers(tokenizer)
    skipped = []
    added = _added_in_front(tokenizer)
    candidates = [(added, "added by the tokenizer in front of every text")] if added else []
    candidates += [
        (tokenizer.bos_token, "the tokenizer's bos_token"),
        (tokenizer.eos_token, "the tokenizer's eos_token, a document separator"),
    ]
    candidates += [(t, "a document separator of the vocabulary") for t in DOCUMENT_SEPARATORS]
    for token, rule in candidates:
        if token is None:
            continue
        tid = _vocab_id(tokenizer, token)
        if tid is None:
            continue
        is_marker = (
            _TURN_MARKERS.search(token) is not None
            if rule.startswith("added")
            else token in markers
        )
        if is_marker:
            if token not in skipped:
                skipped.append(token)
            continue
        return Context(token, tid, rule, has_template, tuple(skipped))
    raise BiasampError(
        f"model {model!r}: no document-start token found (no BOS or EOS that is not a chat "
        f"marker{', passed over ' + ', '.join(skipped) if skipped else ''}, and none of "
        f"{', '.join(DOCUMENT_SEPARATORS)}); give one with context_token (--context-token)"
    )


def model_context(model, requested=None, *, revision=None, trust_remote_code=False) -> Context:
    """The context token :class:`CausalLMScorer` would put before the sentences of ``model``
    (its tokenizer loaded alone), for the lm-evaluation-harness tasks."""
    from ._load import load_tokenizer

    tok = load_tokenizer(model, revision=revision, trust_remote_code=trust_remote_code)
    return choose_context(tok, requested, model=str(model))
