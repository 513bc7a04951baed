"""The argparse parsers of the command line (imported by `cranfield.cli.build_parser` when a command needs
them): the root parser, each command's from its module `cmd_*.py`, and `--campaign` as an option for all."""
from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from pathlib import Path

from engine.version import __version__

_PACKAGE = __name__.rpartition(".")[0]
_DIR = Path(__file__).parent


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `command`, of that command alone when its module `cmd_<command>`
    adds it (a command then starts without importing the modules of the others)."""
    if command:
        name = "cmd_" + command.replace("-", "_")
        if name.isidentifier() and (_DIR / f"{name}.py").is_file():
            parser, sub = _root_parser()
            importlib.import_module(f"{_PACKAGE}.{name}").register(sub)
            if command in sub.choices:
                return parser
    import pkgutil

    parser, sub = _root_parser()
    mods = sorted(pkgutil.iter_modules([str(_DIR)]), key=lambda i: i.name)
    for info in mods:
        if info.name.startswith("cmd_"):
            mod = importlib.import_module(f"{_PACKAGE}.{info.name}")
            mod.register(sub)
    return parser


@functools.lru_cache(maxsize=1)
def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size tells it (without importing shutil)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, given the width it would import shutil for (on every add_argument)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    """The command line's parsers (subcommands too): `_HelpFormatter` unless one is named."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def _root_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = _Parser(
        prog="cranfield",
        description="Run IR evaluation campaigns: pools, judgments, trec_eval-exact measures, "
                    "stability and cost. With no command, opens the TUI on your copy of the demo campaign "
                    "(`cranfield demo` names it).")
    parser.add_argument("--version", action="version", version=f"cranfield {__version__}")
    parser.add_argument("--max-read", metavar="SIZE",
                        help="largest input a reader holds, also after decompression (default 16G, and a .gz "
                             "may not grow more than 100-fold); any command accepts it")
    parser.add_argument("--allow-outside", metavar="DIR", action="append", default=argparse.SUPPRESS,
                        help="let campaign files lie under DIR outside the campaign directory (repeatable; also "
                             "`allow_outside:` in $XDG_CONFIG_HOME/cranfield/config.yaml); campaign.yaml alone "
                             "cannot grant this; any command accepts it")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def campaign_as_option(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`--campaign DIR` names the campaign for every command. Commands that take the campaign as a
    positional DIR keep it (an alias): for them `--campaign DIR` is moved to the positional place."""
    names = [i for i, a in enumerate(argv) if a == "--campaign" or a.startswith("--campaign=")]
    if len(names) != 1:
        return argv
    node, depth = parser, 0
    while depth < len(argv) and not argv[depth].startswith("-"):
        subs = [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or argv[depth] not in subs[0].choices:
            break
        node = subs[0].choices[argv[depth]]
        depth += 1
    positional = [a for a in node._actions if not a.option_strings and a.dest == "campaign"]
    has_option = any("--campaign" in a.option_strings for a in node._actions)
    if not positional or has_option:
        return argv
    i = names[0]
    if argv[i] == "--campaign":
        if i + 1 >= len(argv):
            return argv
        value, rest = argv[i + 1], argv[:i] + argv[i + 2:]
    else:
        value, rest = argv[i].partition("=")[2], argv[:i] + argv[i + 1:]
    return rest[:depth] + [value] + rest[depth:]
