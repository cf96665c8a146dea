"""The ``biasamp`` command line.

``main(argv=None) -> int`` builds the parser from the subcommand modules in
:mod:`biasamp.commands` (each exposes ``register(subparsers)`` which adds its parser
and sets ``func``, a callable ``func(args) -> int``). Input errors
(:class:`biasamp.BiasampError`) print one line to stderr and return 2; ``-v`` adds
the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import traceback

from . import __version__
from ._errors import BiasampError

__all__ = ["main", "build_parser", "SUBCOMMAND_MODULES"]

log = logging.getLogger("biasamp")

#: Modules in :mod:`biasamp.commands` that add a subcommand, in ``--help`` order.
SUBCOMMAND_MODULES = ("probe", "report", "compare", "templates", "base_rates", "count", "score")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors raise instead of exiting, so main() returns 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise _UsageError(f"{self.prog}: {message}")


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    """Return the full ``biasamp`` argument parser."""
    parser = _Parser(
        prog="biasamp",
        description="Measure directional bias amplification (BiasAmp->) in masked language models.",
    )
    parser.add_argument("--version", action="version", version=f"biasamp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (-v info, -vv debug); show tracebacks on errors")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="only errors; no progress bars")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"biasamp.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"biasamp.commands.{name}":
                continue  # subcommand not built into this version
            raise
        module.register(sub)
    return parser


def _configure_logging(verbose: int, quiet: bool) -> None:
    level = logging.ERROR if quiet else (logging.DEBUG if verbose >= 2 else
                                         logging.INFO if verbose == 1 else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", force=True)


def main(argv: list[str] | None = None) -> int:
    """Run the ``biasamp`` command; return the process exit code (0 ok, 2 input error)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0)
    _configure_logging(args.verbose, args.quiet)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (BiasampError, FileNotFoundError) as exc:
        if args.verbose:
            traceback.print_exc()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # stdout closed early (``biasamp ... | head``): stop quietly, and point stdout at
        # /dev/null so Python's flush at exit does not raise a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
