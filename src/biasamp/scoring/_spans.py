"""Input checks and in-context tokenisation of candidates (no torch), and the tokenisation
audit: a candidate's pieces are the tokens of its filled sentence inside its character span."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._conventions import BLANK
from .._errors import BiasampError, shorten
from . import check_estimator
from ._load import load_tokenizer


@dataclass(frozen=True)
class Span:
    """A filled sentence as token ids, with the candidate's pieces at ``ids[start:end]``."""

    ids: tuple
    start: int
    end: int

    @property
    def pieces(self):
        return self.ids[self.start : self.end]


def _items(value, where, noun, *, strings=True, alt="", hint="") -> list:
    """``value`` as a non-empty list (of strings), or one line naming ``where``."""
    if isinstance(value, str):
        raise BiasampError(
            f"{where} must be a list of strings{alt}, not a single string; got "
            f"{shorten(value)!r}{hint}"
        )
    try:
        items = list(value)
    except TypeError:
        raise BiasampError(
            f"{where} must be a list of strings; got {type(value).__name__}"
        ) from None
    if not items:
        raise BiasampError(f"{where} must contain at least one {noun}; got an empty list")
    for i, x in enumerate(items if strings else ()):
        if not isinstance(x, str):
            raise BiasampError(f"{where}[{i}] must be a string; got {type(x).__name__} {x!r}")
    return items


def check_prompts(prompts, blank):
    """``(prefix, suffix)`` around the single blank of each prompt, checked."""
    if not isinstance(blank, str) or not blank:
        raise BiasampError(f"blank must be a non-empty string; got {blank!r}")
    out = []
    for i, p in enumerate(_items(prompts, "prompts", "prompt", hint=" (wrap it in a list)")):
        if (count := p.count(blank)) != 1:
            raise BiasampError(
                f"prompts[{i}] must contain the blank {blank!r} exactly once; found it {count} "
                f"times in {shorten(p)!r}"
            )
        out.append(tuple(p.split(blank)))
    return out


def _check_list(cands, where):
    cands = tuple(_items(cands, where, "candidate"))
    for j, c in enumerate(cands):
        if not c.strip():
            raise BiasampError(f"{where}[{j}] must be a non-empty word; got {c!r}")
        if c != c.strip():
            raise BiasampError(f"{where}[{j}] must not start or end with whitespace; got {c!r}")
    if (dup := next((c for j, c in enumerate(cands) if c in cands[:j]), None)) is not None:
        raise BiasampError(
            f"{where} must not repeat a candidate (renormalisation would count it twice); "
            f"{dup!r} appears more than once in {list(cands)!r}"
        )
    return cands


def check_candidates(candidates, n_prompts):
    """``(per prompt, as given)``: one shared list, or one per prompt of equal lengths."""
    items = _items(
        candidates, "candidates", "candidate", strings=False, alt=" (or one list per prompt)"
    )
    nested = [not isinstance(c, str) for c in items]
    if all(nested):
        if len(items) != n_prompts:
            raise BiasampError(
                f"candidates given per prompt must have one list per prompt ({n_prompts}); "
                f"got {len(items)} lists"
            )
        per = [_check_list(c, f"candidates[{i}]") for i, c in enumerate(items)]
        k = len(per[0])
        for i, c in enumerate(per):
            if len(c) != k:
                raise BiasampError(
                    f"candidates given per prompt must all have the same length; candidates[0] "
                    f"has {k}, candidates[{i}] has {len(c)}"
                )
        return per, tuple(per)
    if any(nested):
        raise BiasampError(
            "candidates must be either a list of strings or a list of lists, not a mix"
        )
    shared = _check_list(items, "candidates")
    return [shared] * n_prompts, shared


def check_score_inputs(
    prompts, candidates, *, scoring=None, blank=BLANK, model_type=None, model=None
):
    """What a scorer's ``score`` would be given, checked without a model."""
    mode = None if model_type is None else check_estimator(scoring, model_type, model=model)
    pairs = check_prompts(prompts, blank)
    per, given = check_candidates(candidates, len(pairs))
    return pairs, per, given, mode


def pad_right(rows, width, pad=0):
    """``(ids, attention mask)``: the token rows padded on the right to ``width``, as int64."""
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    att = np.zeros((len(rows), width), dtype=np.int64)
    for r, toks in enumerate(rows):
        ids[r, : len(toks)] = toks
        att[r, : len(toks)] = 1
    return ids, att


def encode(tokenizer, texts, **extra):
    """``tokenizer(texts)`` with special tokens and their mask, no truncation."""
    return tokenizer(
        list(texts),
        add_special_tokens=True,
        return_special_tokens_mask=True,
        return_attention_mask=False,
        return_token_type_ids=False,
        truncation=False,
        **extra,
    )


def locate_spans(tokenizer, texts_and_bounds, *, max_length=None):
    """A :class:`Span` of each row, by a fast tokenizer's character offsets (``max_length``)."""
    if not getattr(tokenizer, "is_fast", False):
        raise BiasampError(
            f"tokenizer {type(tokenizer).__name__} has no fast (Rust) implementation, which the "
            "scorer needs to locate candidate pieces by character offsets; install "
            "'tokenizers' and use a model whose tokenizer converts to a fast one"
        )
    enc = encode(tokenizer, [t[0] for t in texts_and_bounds], return_offsets_mapping=True)
    unk = tokenizer.unk_token_id
    out = []
    for row, (text, s, e, prompt, cand) in enumerate(texts_and_bounds):
        ids = enc["input_ids"][row]
        offsets = enc["offset_mapping"][row]
        special = enc["special_tokens_mask"][row]
        inside = []
        for t, ((a, b), sp) in enumerate(zip(offsets, special)):
            if sp:
                continue
            # a byte-level BPE piece (GPT-2's "Ġnurse") or a "▁" piece may cover the space
            # before its word: that space is not part of the overlap with the candidate
            lead = len(text[a:b]) - len(text[a:b].lstrip())
            if a + lead < b:
                a += lead
            elif a < b:  # whitespace only ("Ġ" or "▁" alone): it starts the word after it
                a = b
            if a == b:  # whitespace-only piece: belongs to the word at a
                if s <= a < e:
                    inside.append(t)
                continue
            if s <= a and b <= e:
                inside.append(t)
            elif a < e and b > s:
                piece = tokenizer.convert_ids_to_tokens(ids[t])
                raise BiasampError(
                    f"candidate {cand!r} does not end on a token boundary in prompt "
                    f"{shorten(prompt)!r}: the piece {piece!r} covers characters {text[a:b]!r} "
                    "inside and outside the candidate"
                )
        if not inside:
            raise BiasampError(
                f"candidate {cand!r} tokenises to no pieces with {type(tokenizer).__name__} "
                f"(in prompt {shorten(prompt)!r}); it cannot be scored"
            )
        start, end = inside[0], inside[-1] + 1  # contiguous: offsets are monotone
        if unk is not None and unk in ids[start:end]:
            pieces = tokenizer.convert_ids_to_tokens(list(ids[start:end]))
            raise BiasampError(
                f"candidate {cand!r} contains a piece unknown to the tokenizer "
                f"({tokenizer.unk_token!r}): pieces {pieces}; its probability would be that of "
                "the unknown token"
            )
        if max_length is not None and len(ids) > max_length:
            raise BiasampError(
                f"prompt {shorten(prompt)!r} filled with {cand!r} is {len(ids)} tokens long; the "
                f"model accepts at most {max_length}"
            )
        out.append(Span(tuple(ids), start, end))
    return out


def audit_candidates(tokenizer, candidates, *, prompt=None, blank=BLANK):
    """Audit how a tokenizer splits candidate words.

    Parameters
    ----------
    tokenizer : transformers tokenizer, or str
        A loaded (fast) tokenizer, or a model name/folder to load one from.
    candidates : sequence of str, length k
    prompt : str, optional
        Context to tokenise the candidates in; default ``"the [BLANK]"`` (after a space).
    blank : str

    Returns
    -------
    pandas.DataFrame of k rows, in the given order
        ``candidate``, ``pieces``, ``n_pieces``, ``single_piece``, ``first_piece``, and
        ``shares_first_piece_with`` (the candidates ``first-piece`` scoring cannot tell apart).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from transformers import BertTokenizer
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "vocab.txt").write_text(
    ...     "[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\nthe\\nnurse\\nhair\\n##dresser\\n"
    ... )
    >>> tok = BertTokenizer(str(d / "vocab.txt"))
    >>> audit_candidates(tok, ["nurse", "hairdresser"])[["candidate", "pieces", "single_piece"]]
         candidate             pieces  single_piece
    0        nurse           (nurse,)          True
    1  hairdresser  (hair, ##dresser)         False
    """
    import pandas as pd

    if isinstance(tokenizer, str):
        tokenizer = load_tokenizer(tokenizer)
    if not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise BiasampError(
            f"tokenizer must be a transformers tokenizer or a model name/folder; got "
            f"{type(tokenizer).__name__}"
        )
    prompt = f"the {blank}" if prompt is None else prompt
    ((pre, post),) = check_prompts([prompt], blank)
    _, cands = check_candidates(candidates, 1)
    rows = [(pre + c + post, len(pre), len(pre) + len(c), prompt, c) for c in cands]
    spans = locate_spans(tokenizer, rows)
    pieces = [tuple(tokenizer.convert_ids_to_tokens(list(sp.pieces))) for sp in spans]
    firsts = [p[0] for p in pieces]
    rows = [
        (c, p, len(p), len(p) == 1, f, tuple(o for o, g in zip(cands, firsts) if g == f and o != c))
        for c, p, f in zip(cands, pieces, firsts)
    ]
    columns = "candidate pieces n_pieces single_piece first_piece shares_first_piece_with"
    return pd.DataFrame(rows, columns=columns.split())
