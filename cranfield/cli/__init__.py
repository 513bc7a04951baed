"""The `cranfield` command line. Each `cmd_*.py` module adds one subcommand (adding one touches one file).

With no arguments, or with `tui DIR` / a directory, it opens the Textual UI.
"""
from __future__ import annotations

import os
import resource  # loaded up front: with memory exhausted, even loading a module can fail
import sys
from pathlib import Path

from engine.errors import CranfieldError

EXIT_USAGE = 2
EXIT_INPUT = 3


def demo_campaign() -> Path:
    """The bundled demo campaign directory (`cmd_demo.bundled_demo`: in a wheel, a checkout or an editable install)."""
    from .cmd_demo import bundled_demo
    return bundled_demo()


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


def build_parser(command: str | None = None):
    """The parser of every command; with `command`, of that command alone when its module `cmd_<command>`
    adds it (a command then starts without importing the modules of the others). argparse is imported
    here, not with this package (`cranfield eval`'s common forms are read without it: `cmd_eval.fast_args`)."""
    from .parser import build_parser as build
    return build(command)


def campaign_as_option(parser, argv: list[str]) -> list[str]:
    """`--campaign DIR` names the campaign for every command. Commands that take the campaign as a
    positional DIR keep it (an alias): for them `--campaign DIR` is moved to the positional place."""
    from .parser import campaign_as_option as move
    return move(parser, argv)


def _take_option(argv: list[str], flag: str, example: str) -> tuple[list[str], list[str]]:
    """(argv without every `FLAG VALUE` / `FLAG=VALUE`, at any position, the values in order); a FLAG
    with no value after it is an error that shows `example`."""
    out, values, i = [], [], 0
    while i < len(argv):
        a = argv[i]
        if a == flag or a.startswith(flag + "="):
            if a == flag:
                if i + 1 >= len(argv):
                    raise CranfieldError(f"{flag} needs a value, e.g. {flag} {example}")
                values.append(argv[i + 1])
                i += 2
            else:
                values.append(a.partition("=")[2])
                i += 1
            continue
        out.append(a)
        i += 1
    return out, values


def take_max_read(argv: list[str]) -> list[str]:
    """Remove `--max-read SIZE` (any position, any command) from argv and set the read limit every reader
    (and worker process) uses: CRANFIELD_MAX_READ. Raises CranfieldError on a bad size."""
    out, values = _take_option(argv, "--max-read", "64G")
    for val in values:
        from engine.formats.files import parse_size
        try:
            parse_size(val)
        except ValueError:
            raise CranfieldError(f"--max-read {val!r}: give a size such as 500M, 20G or 1T") from None
        os.environ["CRANFIELD_MAX_READ"] = val
    return out


def take_allow_outside(argv: list[str]) -> list[str]:
    """Remove every `--allow-outside DIR` (any position, any command) from argv and add DIR to the roots
    outside campaigns the person grants (CRANFIELD_ALLOW_OUTSIDE, read by engine.util.confine.person_roots;
    worker processes inherit it). Raises CranfieldError when DIR is missing."""
    from engine.util.confine import PERSON_ENV
    out, values = _take_option(argv, "--allow-outside", "/data/trec")
    dirs = [os.path.abspath(os.path.expanduser(v)) for v in values]
    if dirs:
        old = [x for x in os.environ.get(PERSON_ENV, "").split(os.pathsep) if x]
        os.environ[PERSON_ENV] = os.pathsep.join(old + dirs)
    return out


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def memory_message(exc: MemoryError, argv: list[str]) -> str:
    """One line for a command that ran out of memory: what it was doing (the command and its inputs),
    about how much it asked for and was allowed, and what to do instead."""
    import re
    from engine.util import fs
    files = [a for a in argv[1:] if not a.startswith("-") and os.path.exists(a)]
    total = sum(os.path.getsize(f) if os.path.isfile(f) else      # a campaign: its runs
                sum(fs.stat(q).st_size for q in fs.glob(Path(f, "runs")) if fs.is_file(q)) for f in files)
    doing = f"cranfield {argv[0]}" + (f" on {', '.join(files[:3])}" + (" ..." if len(files) > 3 else "")
                                      + f" ({_size(total)} of input)" if files else "")
    asked = getattr(exc, "_total_size", None)             # numpy's _ArrayMemoryError
    if asked is None:
        m = re.search(r"(?:size|allocate) (\d+)", str(exc))    # Arrow: "malloc of size N failed"
        asked = int(m.group(1)) if m else None
    need = f"; one more block of {_size(asked)} did not fit" if asked else ""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    limit = f" within the address-space limit of {_size(soft)}" if soft != resource.RLIM_INFINITY else ""
    if argv[0] == "ingest" or "--campaign" in argv:
        return (f"out of memory{limit} during {doing}{need}. The run store already reads one block of topics "
                f"at a time: allow more memory, split the largest run file, or evaluate fewer runs at once")
    return (f"out of memory{limit} during {doing}{need}. Evaluate large runs through the run store, which "
            f"reads one block of topics at a time: `cranfield ingest DIR` then `cranfield eval --campaign DIR` "
            f"(a campaign directory holding the runs), or evaluate fewer runs or topics at once, or allow "
            f"more memory")


def _out_of_memory(exc: MemoryError, argv: list[str]) -> int:
    """Print the one out-of-memory line; if wording it runs short of memory too, the words alone."""
    try:
        msg = memory_message(exc, argv)
    except Exception:                            # noqa: BLE001 - still short of memory: no imports, no stats
        files = [a for a in argv[1:] if not a.startswith("-")][:3]
        msg = (f"out of memory during cranfield {' '.join(argv[:1])}" + (f" on {', '.join(files)}" if files else "")
               + ": evaluate large runs through the run store (`cranfield ingest DIR` then "
               "`cranfield eval --campaign DIR`), or fewer runs or topics at once, or allow more memory")
    print(f"cranfield: {msg}", file=sys.stderr)
    return EXIT_INPUT


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `cranfield` console script (`argv` None: the process's own arguments, and the
    process is this command's to tune: `engine.util.memory.start_short_command` for `eval`, `judgments auto`
    and `nuggets auto`). Everything printed goes through engine.util.names.ShownStream: an id's control
    characters are shown escaped."""
    from engine.util.confine import PERSON_ENV
    from engine.util.names import ShownStream
    out, err = sys.stdout, sys.stderr
    granted = os.environ.get(PERSON_ENV)      # --allow-outside holds for this command only
    sys.stdout, sys.stderr = ShownStream(out), ShownStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err
        if argv is not None:
            if granted is None:
                os.environ.pop(PERSON_ENV, None)
            else:
                os.environ[PERSON_ENV] = granted


def _main(argv: list[str] | None) -> int:
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv = take_allow_outside(take_max_read(argv))      # global options, at any position
    except CranfieldError as exc:
        print(f"cranfield: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not argv or (len(argv) == 1 and not argv[0].startswith("-") and Path(argv[0]).is_dir()):
        argv = ["tui", *argv]
    args = None
    short = program and (argv[0] == "eval" or argv[:2] in (["judgments", "auto"], ["nuggets", "auto"]))
    if short:
        from engine.util.memory import start_short_command
        start_short_command()
    if argv[0] == "eval":
        from .cmd_eval import fast_args
        args = fast_args(argv[1:])
    if args is None:
        parser = build_parser(argv[0] if not argv[0].startswith("-") else None)
        argv = campaign_as_option(parser, argv)
        args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        rc = args.func(args)
        if short:
            from engine.util.memory import end_short_command
            end_short_command()
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
    except ImportError as exc:                   # a module that could not be mapped: out of memory too
        if "map segment" not in str(exc) and "allocate memory" not in str(exc):
            raise
        return _out_of_memory(MemoryError(), argv)
    except MemoryError as exc:                   # numpy's _ArrayMemoryError, Arrow's, Python's own
        return _out_of_memory(exc, argv)
    except SystemError:                          # a C extension that failed an allocation without saying so
        if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
            raise                                # no memory limit: a genuine defect, shown as one
        return _out_of_memory(MemoryError(), argv)
    except RecursionError:
        print("cranfield: input nested too deeply to process (a hostile or damaged file?)", file=sys.stderr)
        return EXIT_INPUT
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
