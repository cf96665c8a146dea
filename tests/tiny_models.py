"""Tiny, seeded masked and causal language models written to a folder, for offline tests.

Every builder writes a complete Hugging Face model folder (config, weights, tokenizer files) and
returns its path, so tests load it exactly like a real model::

    AutoModelForMaskedLM.from_pretrained(path)  # or AutoModelForCausalLM (GPT-2, Llama, Qwen2)
    AutoTokenizer.from_pretrained(path)

The weights are random but deterministic (``torch.manual_seed(seed)``); the vocabularies are
written by hand (WordPiece; SentencePiece-style Unigram pieces with scores) or trained in-process
with the ``tokenizers`` library (byte-level BPE), so nothing is downloaded.  The WordPiece vocabulary holds the words of the standard
templates and pronouns, the WinoBias occupations, punctuation and single letters; some
occupations are deliberately split into several pieces (``janitor -> jan ##itor``,
``hairdresser -> hair ##dre ##sser``) so that multi-piece handling is exercised.

``initializer_range`` is large on purpose: with the library default (0.02) a random model's
softmax is almost uniform, and tests comparing two computations could pass even if one of them
looked at the wrong position.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ADJECTIVES",
    "OCCUPATIONS",
    "SPLIT_OCCUPATIONS",
    "TEMPLATE_WORDS",
    "fill_hub_cache",
    "make_tiny_albert",
    "make_tiny_bert",
    "make_tiny_distilbert",
    "make_tiny_gpt2",
    "make_tiny_llama",
    "make_tiny_qwen2_chat",
    "make_tiny_roberta",
    "train_bpe",
    "wordpiece_vocab",
]

#: Pronouns, determiners, verbs and fillers used by the templates.
TEMPLATE_WORDS = (
    "he",
    "she",
    "they",
    "his",
    "her",
    "their",
    "him",
    "them",
    "hers",
    "theirs",
    "man",
    "woman",
    "person",
    "men",
    "women",
    "people",
    "boy",
    "girl",
    "male",
    "female",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "has",
    "have",
    "had",
    "will",
    "can",
    "a",
    "an",
    "the",
    "this",
    "that",
    "who",
    "what",
    "as",
    "at",
    "for",
    "of",
    "in",
    "on",
    "to",
    "and",
    "or",
    "with",
    "by",
    "from",
    "works",
    "worked",
    "work",
    "job",
    "said",
    "because",
    "asked",
    "told",
    "very",
    "not",
    "my",
    "our",
    "your",
    "it",
    "its",
)

#: The ten adjectives of the paper's templates (reference-semantics section 3).
ADJECTIVES = (
    "new",
    "known",
    "single",
    "large",
    "small",
    "major",
    "french",
    "old",
    "short",
    "good",
)

#: WinoBias occupations (the 40 of the word lists plus "constructor" and "sewer" of the 32-list).
OCCUPATIONS = (
    "driver",
    "supervisor",
    "janitor",
    "cook",
    "mover",
    "laborer",
    "construction",
    "worker",
    "chief",
    "developer",
    "carpenter",
    "manager",
    "lawyer",
    "farmer",
    "salesperson",
    "physician",
    "guard",
    "analyst",
    "mechanic",
    "sheriff",
    "ceo",
    "attendant",
    "cashier",
    "teacher",
    "nurse",
    "assistant",
    "secretary",
    "auditor",
    "cleaner",
    "receptionist",
    "clerk",
    "counselor",
    "designer",
    "hairdresser",
    "writer",
    "housekeeper",
    "baker",
    "accountant",
    "editor",
    "librarian",
    "tailor",
    "constructor",
    "sewer",
)

#: Occupations written to the WordPiece vocabulary as several pieces (greedy longest match
#: reproduces exactly these splits).
SPLIT_OCCUPATIONS = {
    "janitor": ("jan", "##itor"),
    "mover": ("mo", "##ver"),
    "laborer": ("labor", "##er"),
    "constructor": ("construct", "##or"),
    "salesperson": ("sales", "##person"),
    "cashier": ("cash", "##ier"),
    "hairdresser": ("hair", "##dre", "##sser"),
}

_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_PUNCT = tuple(".,!?;:'\"()-")
_LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")


def wordpiece_vocab(extra_words=()):
    """Return the WordPiece vocabulary of :func:`make_tiny_bert` as a list of tokens.

    Order: specials, punctuation, letters, ``##`` letters, template words, adjectives,
    occupations (whole or split pieces), then ``extra_words``; duplicates are dropped (first
    occurrence wins) so ids are stable.
    """
    tokens = list(_SPECIALS) + list(_PUNCT) + list(_LETTERS) + ["##" + c for c in _LETTERS]
    tokens += list(TEMPLATE_WORDS) + list(ADJECTIVES)
    for occ in OCCUPATIONS:
        tokens += list(SPLIT_OCCUPATIONS.get(occ, (occ,)))
    for word in extra_words:
        word = str(word).strip().lower()
        if not word:
            continue
        tokens += word.split()
    seen = set()
    out = []
    for tok in tokens:
        if tok not in seen:
            seen.add(tok)
            out.append(tok)
    return out


def _bert_tokenizer(path, vocab):
    from transformers import BertTokenizer

    vocab_file = Path(path) / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # transformers 5.x: the fast class ignores vocab_file; the slow-named class builds from it.
    tok = BertTokenizer(str(vocab_file), do_lower_case=True, model_max_length=64)
    if len(tok) != len(vocab):  # pragma: no cover - guards against a silently ignored vocab
        raise RuntimeError(f"tokenizer has {len(tok)} tokens, vocab.txt has {len(vocab)}")
    tok.save_pretrained(str(path))
    return tok


def make_tiny_bert(
    path, *, extra_words=(), seed=0, hidden_size=32, num_layers=2, initializer_range=0.5
):
    """Write a tiny random ``BertForMaskedLM`` with a hand-written WordPiece vocab to ``path``.

    Parameters
    ----------
    path : str or Path
        Folder to create (parents too); existing files are overwritten.
    extra_words : iterable of str
        Words appended to the vocabulary as whole tokens (multi-word strings are split on spaces).
    seed : int
        Seed for ``torch.manual_seed``; the same seed gives bit-identical weights.

    Returns
    -------
    Path
        The folder, loadable with ``from_pretrained``.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = wordpiece_vocab(extra_words)
    tok = _bert_tokenizer(path, vocab)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=64,
        type_vocab_size=2,
        pad_token_id=tok.pad_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = BertForMaskedLM(config).eval()
    model.save_pretrained(str(path))
    return path


def make_tiny_distilbert(
    path, *, extra_words=(), seed=0, dim=32, num_layers=2, initializer_range=0.5
):
    """Write a tiny random ``DistilBertForMaskedLM`` sharing :func:`make_tiny_bert`'s vocab.

    Parameters and return value as :func:`make_tiny_bert`.
    """
    import torch
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = wordpiece_vocab(extra_words)
    tok = _bert_tokenizer(path, vocab)
    config = DistilBertConfig(
        vocab_size=len(vocab),
        dim=dim,
        n_layers=num_layers,
        n_heads=2,
        hidden_dim=2 * dim,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = DistilBertForMaskedLM(config).eval()
    model.save_pretrained(str(path))
    return path


def _bpe_corpus():
    """Sentences for training the byte-level BPE: frequent words become single tokens."""
    lines = []
    pronouns = ("he", "she", "they", "He", "She", "They", "his", "her", "their")
    for adj in ADJECTIVES:
        art = "an" if adj[0] in "aeiou" else "a"
        for pro in pronouns:
            for verb in ("is", "was", "are", "were"):
                lines.append(f"{pro} {verb} {art} {adj} person. {pro} {verb} {art} {adj} man.")
                lines.append(f"The {adj} woman said {pro} {verb} good, the {adj} people work.")
    # occupations: a few frequent ones become whole tokens, the rest stay split.
    frequent = (
        "nurse",
        "doctor",
        "cook",
        "driver",
        "lawyer",
        "teacher",
        "baker",
        "clerk",
        "chief",
        "guard",
        "writer",
        "editor",
    )
    for occ in frequent:
        for pro in ("he", "she", "they"):
            lines += [f"{pro} is a good {occ}.", f"the {occ} said {pro} was a new {occ}."] * 8
    for occ in OCCUPATIONS:
        if occ not in frequent:
            lines.append(f"he is a {occ}.")
    return lines


def make_tiny_roberta(
    path, *, seed=0, hidden_size=32, num_layers=2, initializer_range=0.5, vocab_size=420
):
    """Write a tiny random ``RobertaForMaskedLM`` with an in-process trained byte-level BPE.

    The tokenizer has leading-space ``Ġ`` tokens and ``<mask>``; frequent template words and a
    dozen occupations are single tokens, rarer occupations (e.g. ``hairdresser``) are split.

    Parameters
    ----------
    path : str or Path
        Folder to create.
    seed : int
        Seed for ``torch.manual_seed``.
    vocab_size : int
        BPE vocabulary size (including the 256 byte tokens and 5 specials).

    Returns
    -------
    Path
    """
    import torch
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        _bpe_corpus(),
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    bpe_dir = path / "_bpe"
    bpe_dir.mkdir(exist_ok=True)
    vocab_file, merges_file = bpe.save_model(str(bpe_dir))
    # like roberta-base: "<mask>" absorbs the space before it ("a good <mask>." -> "Ġgood", "<mask>")
    tok = RobertaTokenizer(
        vocab_file,
        merges_file,
        model_max_length=64,
        mask_token=AddedToken("<mask>", lstrip=True, rstrip=False),
    )
    tok.save_pretrained(str(path))
    # the tokenizer folder is self-contained; drop the training copy
    for f in bpe_dir.iterdir():
        f.unlink()
    bpe_dir.rmdir()
    n_vocab = len(tok)
    config = RobertaConfig(
        vocab_size=n_vocab,
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=66,
        type_vocab_size=1,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = RobertaForMaskedLM(config).eval()
    model.save_pretrained(str(path))
    return path


#: Occupations written to the ALBERT (SentencePiece Unigram) vocabulary as several pieces only;
#: the Viterbi segmentation then yields exactly these pieces.
SPLIT_OCCUPATIONS_SP = {
    "janitor": ("\u2581jan", "itor"),
    "salesperson": ("\u2581sales", "person"),
    "cashier": ("\u2581cash", "ier"),
    "hairdresser": ("\u2581hair", "dress", "er"),
}


def unigram_vocab():
    """Return the ``(piece, score)`` list of :func:`make_tiny_albert` (SentencePiece style).

    Specials first (``<pad>``, ``<unk>``, ``[CLS]``, ``[SEP]``, ``[MASK]``, ALBERT's order of
    the first five ids), then ``\u2581`` and punctuation, single letters (low scores: a fallback
    that is never preferred), then ``\u2581``-prefixed template words, adjectives and
    occupations, the split ones as :data:`SPLIT_OCCUPATIONS_SP`.
    """
    sp = "\u2581"
    vocab = [
        ("<pad>", 0.0),
        ("<unk>", 0.0),
        ("[CLS]", 0.0),
        ("[SEP]", 0.0),
        ("[MASK]", 0.0),
        (sp, -4.0),
    ]
    vocab += [(c, -4.0) for c in _PUNCT]
    vocab += [(c, -8.0) for c in _LETTERS] + [(sp + c, -8.0) for c in _LETTERS]
    pieces = [sp + w for w in TEMPLATE_WORDS + ADJECTIVES]
    for occ in OCCUPATIONS:
        pieces += list(SPLIT_OCCUPATIONS_SP.get(occ, (sp + occ,)))
    seen = {p for p, _ in vocab}
    for piece in pieces:
        if piece not in seen:
            seen.add(piece)
            vocab.append((piece, -3.0))
    return vocab


def make_tiny_albert(path, *, seed=0, hidden_size=32, num_layers=2, initializer_range=0.5):
    """Write a tiny random ``AlbertForMaskedLM`` with a SentencePiece-style Unigram tokenizer.

    The tokenizer is transformers' ``AlbertTokenizer`` (Unigram model, ``\u2581`` word-start
    pieces, lower-casing, ``[MASK]``) built from :func:`unigram_vocab`, so no ``spiece.model``
    has to be trained or downloaded. Parameters and return value as :func:`make_tiny_bert`.
    """
    import torch
    from transformers import AlbertConfig, AlbertForMaskedLM, AlbertTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = AlbertTokenizer(vocab=unigram_vocab(), model_max_length=64)
    tok.save_pretrained(str(path))
    config = AlbertConfig(
        vocab_size=len(tok),
        embedding_size=16,
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    model = AlbertForMaskedLM(config).eval()
    model.save_pretrained(str(path))
    return path


# ----------------------------------------------------------------------------- causal LMs
# ``initializer_range`` 0.3 (not 0.5 as above): a causal sentence score sums a dozen token log
# probabilities, and with 0.5 they are so large (about -90 a sentence) that float32 rounding
# alone reaches 1e-5; with 0.3 the softmax is still far from uniform (per-position std of the
# log probabilities about 1.7 nats, top probability about 40x the uniform one).
#: A chat template in the style of instruction-tuned models (ChatML); the scorer must ignore it
#: and score plain text.
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def train_bpe(kind, *, vocab_size, special_tokens, corpus=None):
    """Train a BPE in-process; return ``(vocab dict, merges list of (a, b))``.

    ``kind="byte-level"``: GPT-2 style (``Ġ`` leading-space pieces, 256 byte symbols);
    ``kind="metaspace"``: SentencePiece/Llama style (``▁`` word starts, punctuation split off
    during training so no piece crosses it). The corpus defaults to :func:`_bpe_corpus`.
    """
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    if kind == "byte-level":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        alphabet = pre_tokenizers.ByteLevel.alphabet()
    elif kind == "metaspace":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first"),
                pre_tokenizers.Punctuation(),
            ]
        )
        alphabet = []
    else:  # pragma: no cover - test helper misuse
        raise ValueError(kind)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        special_tokens=list(special_tokens),
        initial_alphabet=alphabet,
    )
    tok.train_from_iterator(corpus if corpus is not None else _bpe_corpus(), trainer)
    model = json.loads(tok.to_str())["model"]
    return dict(model["vocab"]), [tuple(m) for m in model["merges"]]


def _save(path, model):
    model.save_pretrained(str(path))
    return path


def make_tiny_gpt2(
    path,
    *,
    seed=0,
    hidden_size=32,
    num_layers=2,
    initializer_range=0.3,
    vocab_size=420,
    n_positions=64,
):
    """Write a tiny random ``GPT2LMHeadModel`` with an in-process trained byte-level BPE.

    The tokenizer is transformers' ``GPT2Tokenizer`` built from ``vocab.json``/``merges.txt``:
    ``<|endoftext|>`` is BOS, EOS and UNK, there is **no pad token** and no BOS is added when
    encoding (as for the real ``gpt2``). Parameters and return value as :func:`make_tiny_roberta`;
    ``n_positions``: the longest sequence (tokenizer and model).
    """
    import json

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2Tokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab, merges = train_bpe("byte-level", vocab_size=vocab_size, special_tokens=["<|endoftext|>"])
    (path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (path / "merges.txt").write_text(
        "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8"
    )
    tok = GPT2Tokenizer(
        str(path / "vocab.json"), str(path / "merges.txt"), model_max_length=n_positions
    )
    if len(tok) != len(vocab):  # pragma: no cover - guards against a silently ignored vocab
        raise RuntimeError(f"tokenizer has {len(tok)} tokens, vocab.json has {len(vocab)}")
    tok.save_pretrained(str(path))
    config = GPT2Config(
        vocab_size=len(tok),
        n_embd=hidden_size,
        n_layer=num_layers,
        n_head=2,
        n_positions=n_positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        initializer_range=initializer_range,
    )
    torch.manual_seed(seed)
    return _save(path, GPT2LMHeadModel(config).eval())


def _llama_vocab(vocab_size):
    """Llama-style vocabulary: ``<unk> <s> </s>``, the 256 byte-fallback tokens, then BPE pieces."""
    pieces, merges = train_bpe(
        "metaspace", vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"]
    )
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in pieces:
        vocab.setdefault(piece, len(vocab))
    return vocab, merges


def make_tiny_llama(
    path,
    *,
    seed=0,
    hidden_size=32,
    num_layers=2,
    initializer_range=0.3,
    vocab_size=300,
    tie_word_embeddings=False,
    head=True,
):
    """Write a tiny random ``LlamaForCausalLM`` with a Llama tokenizer (BPE, byte fallback, ▁).

    The tokenizer (transformers' ``LlamaTokenizer``) adds ``<s>`` in front of every sentence and
    has no pad token; the model uses grouped-query attention (2 heads, 1 key/value head) and an
    untied LM head. ``head=False`` saves only the ``LlamaModel`` body (a checkpoint without a
    trained LM head, for the missing-weights tests).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab, merges = _llama_vocab(vocab_size)
    tok = LlamaTokenizer(vocab=vocab, merges=merges, model_max_length=64, add_bos_token=True)
    tok.save_pretrained(str(path))
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        initializer_range=initializer_range,
        tie_word_embeddings=tie_word_embeddings,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    if not head:
        model = model.model
        model.config.architectures = ["LlamaModel"]
    return _save(path, model)


def make_tiny_qwen2_chat(
    path, *, seed=0, hidden_size=32, num_layers=2, initializer_range=0.3, vocab_size=420
):
    """Write a tiny random ``Qwen2ForCausalLM`` whose tokenizer looks like an instruct model's.

    Byte-level BPE (``Qwen2Tokenizer``), **no BOS token**, ``<|endoftext|>`` as EOS and pad,
    ChatML special tokens and a chat template: a chat/instruction model to be used as a plain LM.
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM, Qwen2Tokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab, merges = train_bpe(
        "byte-level",
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    )
    tok = Qwen2Tokenizer(
        vocab=vocab,
        merges=merges,
        model_max_length=64,
        chat_template=CHATML_TEMPLATE,
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    tok.save_pretrained(str(path))
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        eos_token_id=tok.eos_token_id,
        initializer_range=initializer_range,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return _save(path, Qwen2ForCausalLM(config).eval())


def fill_hub_cache(
    model_dir, cache_dir, repo_id, commit="0123456789abcdef0123456789abcdef01234567"
):
    """Lay out ``model_dir``'s files in a Hugging Face hub cache as a download of ``repo_id`` would.

    ``cache_dir/models--ORG--NAME/{blobs,refs/main,snapshots/COMMIT}``; each snapshot file links
    to a blob named by its sha256 (as the hub names large files), so ``from_pretrained(repo_id,
    cache_dir=cache_dir, local_files_only=True)`` (or ``HF_HUB_OFFLINE=1``) loads it.

    Returns
    -------
    Path
        The snapshot folder.
    """
    import hashlib
    import os

    repo = Path(cache_dir) / ("models--" + repo_id.replace("/", "--"))
    snap = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    snap.mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    for f in sorted(Path(model_dir).iterdir()):
        if f.is_file():
            data = f.read_bytes()
            blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
            blob.write_bytes(data)
            link = snap / f.name
            if link.exists() or link.is_symlink():
                link.unlink()
            os.symlink(os.path.relpath(blob, snap), link)
    return snap
