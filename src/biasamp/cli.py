"""The ``biasamp`` command line: ``main(argv=None) -> int``; only the chosen subcommand's
options are built (``biasamp --help`` imports no command)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
import warnings

from . import __version__
from ._errors import OPTION_NAMES, BiasampError
from ._output import Stopped, stop_signals_raise
from ._progress import Display
from ._registry import Registry

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: Subcommand name -> the :mod:`biasamp.commands` function adding its options; ``--help`` order.
SUBCOMMANDS = Registry("subcommand")
for _name, _target, _help in (
    ("probe", "model:probe", "measure BiasAmp-> of one or more masked or causal language models"),
    (
        "report",
        "results:report",
        "rebuild reports from a result directory (results.json), no model needed",
    ),
    ("compare", "results:compare", "compare several result directories side by side"),
    (
        "templates",
        "data:templates",
        "list template sets and task vocabularies; show generated sentences",
    ),
    ("base-rates", "data:base_rates", "list base-rate sources or show a source's joint table"),
    (
        "count",
        "data:count",
        "count (occupation, gender-word) co-occurrences per sentence in a corpus",
    ),
    (
        "score",
        "model:score",
        "score candidate words for a blank with a masked or causal language model",
    ),
    ("pairs", "model:pairs", "score sentence pairs (CrowS-Pairs) with a masked language model"),
):
    SUBCOMMANDS.register_lazy(_name, f"biasamp.commands.{_target}", description=_help)


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors raise instead of exiting, so main() returns 2."""

    def error(self, message: str):
        raise _UsageError(f"{self.prog}: {message}")


class _UsageError(Exception):
    pass


def _add_verbosity(parser, *, dest_prefix: str = "") -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        dest=f"{dest_prefix}verbose",
        action="count",
        default=0,
        help="more logging (-v info, -vv debug); tracebacks on errors",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        dest=f"{dest_prefix}quiet",
        action="store_true",
        help="only errors: no progress bars, warnings or third-party logging",
    )


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The ``biasamp`` parser: every subcommand, with the options of those in ``commands``
    (default: all)."""
    parser = _Parser(
        prog="biasamp",
        description="Measure directional bias amplification (BiasAmp->) in language models.",
    )
    parser.add_argument("--version", action="version", version=f"biasamp {__version__}")
    _add_verbosity(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in SUBCOMMANDS.names():
        text = SUBCOMMANDS.description(name)
        p = sub.add_parser(name, help=text, description=text + ".")
        if commands is None or name in commands:
            SUBCOMMANDS.get(name)(p)
        _add_verbosity(p, dest_prefix="sub_")
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _warning_origin(filename: str) -> str | None:
    """None for a warning of biasamp's own code, else the package (or file) it comes from."""
    path = os.path.abspath(filename or "")
    if path.startswith(_PACKAGE_DIR):
        return None
    parts = path.split(os.sep)
    for i, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):
            return parts[i + 1].removesuffix(".py")
    return os.path.basename(path).removesuffix(".py") or "python"


class _Terminal(logging.Handler):
    """What the CLI shows on stderr besides errors, through the progress display: each distinct
    warning once, as one line (``warning (package): ...`` for another package's), warned or
    logged; a logged error as ``error: ...``; info and debug with their logger's name."""

    def __init__(self, display: Display | None):
        super().__init__()
        self.display = display
        self.seen: set[str] = set()

    def line(self, text: str) -> None:
        if self.display is not None:
            self.display.write(text)
        else:
            print(text, file=sys.stderr)

    def warning(self, message, origin: str | None) -> None:
        text = ("warning: " if origin is None else f"warning ({origin}): ") + _one_line(message)
        if text not in self.seen:
            self.seen.add(text)
            self.line(text)

    def showwarning(self, message, category, filename, lineno, file=None, line=None):  # noqa: PLR0917 - the warnings.showwarning protocol
        """``warnings.showwarning`` replacement."""
        self.warning(message, _warning_origin(filename))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            top = record.name.split(".")[0]
            origin = None if top == "biasamp" else top
            if record.levelno >= logging.ERROR:
                where = "" if origin is None else f" ({origin})"
                self.line(f"error{where}: {_one_line(record.getMessage())}")
            elif record.levelno >= logging.WARNING:
                self.warning(record.getMessage(), origin)
            else:
                self.line(f"{record.levelname} {record.name}: {record.getMessage()}")
        except Exception:  # noqa: BLE001  # pragma: no cover - logging.Handler.emit's contract
            self.handleError(record)


def _configure_logging(verbose: int, quiet: bool, terminal: _Terminal) -> None:
    level = logging.ERROR if quiet else max(logging.DEBUG, logging.WARNING - 10 * verbose)
    logging.basicConfig(level=level, handlers=[terminal], force=True)
    if quiet:  # third-party libraries too (transformers and huggingface_hub log and print)
        os.environ["TRANSFORMERS_VERBOSITY"] = "error"
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
        for name in ("transformers", "huggingface_hub", "datasets", "urllib3", "filelock"):
            logging.getLogger(name).setLevel(logging.ERROR)


def main(argv: list[str] | None = None) -> int:
    """Run the ``biasamp`` command; return the exit code (0 ok, 1 OS error, 2 input error, 130
    after Ctrl-C, with no traceback)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # the subcommand: the first word that is not an option (biasamp's own take no value)
    parser = build_parser(commands=[w for w in argv if not w.startswith("-")][:1])
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0)
    args.verbose = max(args.verbose, getattr(args, "sub_verbose", 0))
    args.quiet = args.quiet or getattr(args, "sub_quiet", False)
    # the one progress display of the run (commands pass args.display to the library)
    args.display = None if args.quiet else Display()
    terminal = _Terminal(args.display)
    _configure_logging(args.verbose, args.quiet, terminal)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    with warnings.catch_warnings():
        if args.quiet:
            warnings.simplefilter("ignore")
        else:
            warnings.simplefilter("always")
            warnings.showwarning = terminal.showwarning
        names = OPTION_NAMES.set(getattr(args, "option_names", None) or {})  # by their flags
        try:
            with stop_signals_raise():  # SIGTERM and SIGHUP clean up as Ctrl-C does
                try:
                    return int(args.func(args) or 0)
                finally:  # the bar goes before the last lines (an error, the report)
                    OPTION_NAMES.reset(names)
                    if args.display is not None:
                        args.display.close()
        except (BiasampError, FileNotFoundError) as exc:
            if args.verbose:
                traceback.print_exc()
            print(f"error: {_one_line(exc)}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            # stdout closed early (``biasamp ... | head``): stop quietly, and point stdout at
            # /dev/null so Python's flush at exit does not raise a second time.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 0
        except Stopped as exc:
            print(f"stopped ({exc.name})", file=sys.stderr)
            return exc.exit_code
        except OSError as exc:  # not the input's fault (a full disk): one line, exit 1
            if args.verbose:
                traceback.print_exc()
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"error: {where}{_one_line(exc.strerror or exc)}", file=sys.stderr)
            return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
