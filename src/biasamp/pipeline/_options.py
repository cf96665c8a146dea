"""Help next to the field: each :class:`~biasamp.pipeline.ProbeConfig` option is declared once,
with its default, its constraint, its help text and how the command line spells it
(lm-evaluation-harness's ``EvaluatorConfig`` idea).

:func:`option` makes the dataclass field; :func:`config_options` reads the fields back as
:class:`ConfigOption` values, from which the ``Parameters`` section of ``ProbeConfig``'s
docstring (:func:`parameters_doc`) and the options of ``biasamp probe``, ``score`` and
``pairs`` (``commands.add_config_options``) are generated. A help text is written for both
readers: ````name```` marks a value or an option, which the command line shows as ``'name'``.

>>> from dataclasses import dataclass
>>> from biasamp._validation import PositiveInt
>>> @dataclass
... class Demo:
...     batch_size: int = option(32, PositiveInt, group="loading the model", type=int,
...                              metavar="N", help="Inputs per forward pass.")
>>> opt, = config_options(Demo)
>>> opt.flags, opt.default, cli_help(opt)
(('--batch-size',), 32, 'Inputs per forward pass. (default: 32)')
>>> print(parameters_doc(Demo))
Parameters
----------
batch_size : int
    Inputs per forward pass.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Callable
from dataclasses import MISSING, dataclass
from typing import Any

from .._validation import Constraint

__all__ = ["ConfigOption", "GROUPS", "cli_help", "config_options", "option", "parameters_doc"]

#: The argument groups of ``biasamp probe``, in --help order.
GROUPS = ("model", "loading the model", "templates and tasks", "base rates", "bootstrap",
          "output")

_KEY = "biasamp_option"


@dataclass(frozen=True)
class ConfigOption:
    """One option of :class:`~biasamp.pipeline.ProbeConfig`, as the CLI and the docs see it.

    Attributes
    ----------
    name : str
        The field name (``base_rates``).
    default : object
        The field's default (a list default is built by its factory).
    constraint : Constraint
        Checks the value and gives its normal form, where a config is built.
    help : str
        The help text, once for the docstring and ``--help``.
    group : str or None
        Its argument group (one of :data:`GROUPS`); None: not a command-line option.
    flags : tuple of str
        The command line's spelling (``--base-rates``; first the long one).
    metavar, type, action : optional
        Passed to ``argparse`` (``action="store_true"`` for a switch; ``"append"`` to repeat).
    names : callable or None
        The registered names the option takes (template sets, sources...), listed in --help.
    doc_type : str
        The numpydoc type (``str or None``).
    """

    name: str
    default: Any
    constraint: Constraint
    help: str
    group: str | None
    flags: tuple[str, ...]
    metavar: str | None
    type: Callable | None
    action: str | None
    names: Callable[[], list[str]] | None
    doc_type: str


def option(default: Any = MISSING, constraint: Constraint | None = None, *, help: str,
           group: str | None, flags: tuple[str, ...] = (), metavar: str | None = None,
           type: Callable | None = None, action: str | None = None,
           names: Callable[[], list[str]] | None = None, factory: Callable | None = None,
           doc_type: str | None = None) -> Any:
    """A dataclass field carrying its option's constraint, help and command-line spelling.

    ``factory`` builds a mutable default (a list); ``flags`` default to ``--name-with-dashes``;
    ``group=None`` keeps the field off the command line.
    """
    if group is not None and group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}; got {group!r}")
    meta = {_KEY: {"constraint": constraint, "help": " ".join(help.split()), "group": group,
                   "flags": tuple(flags), "metavar": metavar, "type": type, "action": action,
                   "names": names, "doc_type": doc_type}}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _doc_type(annotation: str) -> str:
    """``str | list[str] | None`` -> ``str or list of str or None``."""
    text = re.sub(r"list\[(\w+)\]", r"list of \1", str(annotation))
    return text.replace(" | ", " or ")


def config_options(cls) -> list[ConfigOption]:
    """The options of a dataclass whose fields were made by :func:`option`, in field order."""
    out = []
    for f in dataclasses.fields(cls):
        meta = f.metadata[_KEY]
        default = f.default_factory() if f.default is MISSING else f.default
        flags = meta["flags"] or ("--" + f.name.replace("_", "-"),)
        out.append(ConfigOption(
            name=f.name, default=default, constraint=meta["constraint"], help=meta["help"],
            group=meta["group"], flags=flags, metavar=meta["metavar"], type=meta["type"],
            action=meta["action"], names=meta["names"],
            doc_type=meta["doc_type"] or _doc_type(f.type)))
    return out


def _shown(default) -> str:
    if isinstance(default, (list, tuple)):
        return ",".join(map(str, default))
    return str(default)


def cli_help(opt: ConfigOption, flags: dict[str, str] | None = None) -> str:
    """The option's ``--help`` text: its help, the names it takes, its default.

    ````x```` becomes ``'x'``, or the option's flag where ``flags`` maps the field name ``x``
    to it (``device_map`` -> ``--device-map``); a default of None, False or an empty list is
    not shown (the help says what leaving the option out does); ``%`` is escaped for argparse.
    """
    flags = flags or {}
    text = re.sub(r"``(.+?)``", lambda m: flags.get(m[1], f"'{m[1]}'"), opt.help)
    if opt.names is not None:
        text += f" [{', '.join(opt.names())}]"
    if not (opt.default is None or opt.default is False or opt.default == []):
        text += f" (default: {_shown(opt.default)})"
    return text.replace("%", "%%")


def parameters_doc(cls) -> str:
    """The numpydoc ``Parameters`` section of a dataclass made with :func:`option`."""
    lines = ["Parameters", "----------"]
    for opt in config_options(cls):
        lines.append(f"{opt.name} : {opt.doc_type}")
        lines += textwrap.wrap(opt.help, width=88, initial_indent="    ",
                               subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(lines)
