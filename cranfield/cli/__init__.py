"""The `cranfield` command line. Each `cmd_*.py` module adds one subcommand (adding one touches one file).

With no arguments, or with `tui DIR` / a directory, it opens the Textual UI.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from pathlib import Path

from engine.errors import CranfieldError
from engine.version import __version__

EXIT_USAGE = 2
EXIT_INPUT = 3


def demo_campaign() -> Path:
    """The bundled demo campaign directory."""
    return Path(__file__).resolve().parents[2] / "campaigns" / "demo"


def load_inputs(args, command: str, warnings):
    """(campaign or None, judgments, runs) from `--campaign DIR` or positional `JUDGMENTS RUN [RUN ...]`."""
    from engine.formats.detect import read_judgments
    from engine.formats.runs import read_runs

    if args.campaign:
        from engine.campaign.campaign import load_campaign
        camp = load_campaign(args.campaign, warnings=warnings)
        return camp, camp.qrels(), camp.runs()
    if len(args.files) < 2:
        raise CranfieldError(f"{command} needs a judgments file and at least one run file "
                             f"(cranfield {command} JUDGMENTS RUN [RUN ...]) or --campaign DIR")
    return None, read_judgments(args.files[0], warnings), read_runs(args.files[1:], warnings)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `command`, of that command alone when its module `cmd_<command>`
    adds it (a command then starts without importing the modules of the others)."""
    if command:
        name = "cmd_" + command.replace("-", "_")
        if name.isidentifier() and (Path(__file__).parent / f"{name}.py").is_file():
            parser, sub = _root_parser()
            importlib.import_module(f"{__name__}.{name}").register(sub)
            if command in sub.choices:
                return parser
    import pkgutil

    parser, sub = _root_parser()
    mods = sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name)
    for info in mods:
        if info.name.startswith("cmd_"):
            mod = importlib.import_module(f"{__name__}.{info.name}")
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


def take_max_read(argv: list[str]) -> list[str]:
    """Remove `--max-read SIZE` (any position, any command) from argv and set the read limit every reader
    (and worker process) uses: CRANFIELD_MAX_READ. Raises CranfieldError on a bad size."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--max-read" or a.startswith("--max-read="):
            if a == "--max-read":
                if i + 1 >= len(argv):
                    raise CranfieldError("--max-read needs a size, e.g. --max-read 64G")
                val, i = argv[i + 1], i + 2
            else:
                val, i = a.partition("=")[2], i + 1
            from engine.formats.files import parse_size
            try:
                parse_size(val)
            except ValueError:
                raise CranfieldError(f"--max-read {val!r}: give a size such as 500M, 20G or 1T") from None
            os.environ["CRANFIELD_MAX_READ"] = val
            continue
        out.append(a)
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `cranfield` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a == "--max-read" or a.startswith("--max-read=") for a in argv):
        try:
            argv = take_max_read(argv)
        except CranfieldError as exc:
            print(f"cranfield: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if not argv or (len(argv) == 1 and not argv[0].startswith("-") and Path(argv[0]).is_dir()):
        argv = ["tui", *argv]
    parser = build_parser(argv[0] if not argv[0].startswith("-") else None)
    argv = campaign_as_option(parser, argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        rc = args.func(args)
    except CranfieldError as exc:
        print(f"cranfield: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("cranfield: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:                       # disk full, read-only, permission: one line, no traceback
        from engine.util.atomic import os_error_message
        print(f"cranfield: {os_error_message(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except RecursionError:
        print("cranfield: input nested too deeply to process (a hostile or damaged file?)", file=sys.stderr)
        return EXIT_INPUT
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
