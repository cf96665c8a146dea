"""Subcommands of the ``biasamp`` CLI, one module each, each with ``register(subparsers)``.

The options that load a model are declared once, here (:func:`add_model_options`), for
``probe``, ``score`` and ``pairs``: one help text and one default each (the default from
:class:`~biasamp.pipeline.ProbeConfig`, the one place it is set).
"""

from __future__ import annotations

#: Option -> (dest, argparse keywords, help). Defaults come from ProbeConfig.
_MODEL_OPTIONS = {
    "--device": ("device", {}, "auto, cpu, cuda, cuda:1, mps (default {default})"),
    "--device-map": ("device_map", {"metavar": "MAP"},
                     "auto (or balanced, sequential): accelerate places a model too large for "
                     "one device over the GPUs, the CPU and disk (default: none, the whole "
                     "model on --device)"),
    "--max-memory": ("max_memory", {"metavar": "LIST"},
                     "with --device-map: the most each device may hold, e.g. "
                     "'0=20GiB,1=20GiB,cpu=60GiB'"),
    "--offload-folder": ("offload_folder", {"metavar": "DIR"},
                         "with --device-map: where the layers that fit nowhere else go (disk)"),
    "--dtype": ("dtype", {}, "float32 (default), bfloat16, float16 (GPU) or float64 (an exact "
                             "reference run, slower)"),
    "--batch-size": ("batch_size", {"type": int, "metavar": "N"},
                     "inputs per forward pass: prompts, or masked contexts of sentence pairs "
                     "(default {default})"),
    "--revision": ("revision", {}, "model revision (branch, tag or commit) on the hub"),
    "--trust-remote-code": ("trust_remote_code", {"action": "store_true"},
                            "allow custom model code from the hub"),
    "--allow-missing-weights": ("allow_missing_weights", {"action": "store_true"},
                                "load a checkpoint with weights missing (e.g. no trained LM "
                                "head; initialised at random): the report says so at its top"),
    "--score-cache": ("score_cache", {"metavar": "DIR"},
                      "folder of the sqlite score cache (prompts already scored with the same "
                      "weights, tokenizer, estimator and dtype are reused)"),
    "--hf-cache-dir": ("hf_cache_dir", {"metavar": "DIR"},
                       "Hugging Face download cache (from_pretrained cache_dir)"),
}


def add_model_options(parser, *, from_config: bool = False, without=()) -> None:
    """The options that load a model, into ``parser`` (an argument group of their own).

    ``from_config``: every default is None, so that a ``--config`` file's value stands unless
    the flag is given (``biasamp probe``); otherwise the defaults are ProbeConfig's.
    ``without``: options a command does not take.
    """
    from ..pipeline import ProbeConfig

    fields = ProbeConfig.__dataclass_fields__
    group = parser.add_argument_group("loading the model")
    for flag, (dest, kwargs, text) in _MODEL_OPTIONS.items():
        if flag in without:
            continue
        default = fields[dest].default
        kwargs = dict(kwargs)
        kwargs["default"] = None if from_config else default
        group.add_argument(flag, dest=dest, help=text.format(default=default), **kwargs)
