"""Fast start: `cranfield --help` loads no heavy library, `cranfield eval` loads neither scipy nor the TUI,
and the light name lists the command line shows match the modules that implement them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "scipy", "pyarrow", "textual", "matplotlib", "sklearn")


def _loaded_after(code: str) -> list[str]:
    """Top-level heavy packages imported by `code` in a fresh interpreter."""
    probe = code + f"\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_help_imports_no_heavy_library():
    assert _loaded_after("from cranfield.cli import build_parser\nbuild_parser().format_help()") == []
    assert _loaded_after("import engine") == []


def test_eval_imports_only_what_it_needs():
    demo = ROOT / "campaigns" / "demo"
    code = ("import contextlib, io\nfrom cranfield.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['eval', '-m', 'map', '-m', 'P.10', {str(demo / 'judgments' / 'qrels.txt')!r}, "
            f"{str(demo / 'runs' / 'asterA1.txt')!r}])")
    loaded = _loaded_after(code)
    assert loaded == []                            # small clean files: the plain path (engine.evaluation.plain)


@pytest.mark.parametrize("argv, allowed", [
    (["--help"], []),
    (["judgments", "next", "{c}", "--topic", "401", "--depth", "60"], ["pandas", "pyarrow"]),
    (["judgments", "add", "{c}", "401", "D401-104", "1"], ["pandas", "pyarrow"]),
    (["status", "{c}", "--plain"], ["pandas", "pyarrow"]),
], ids=["help", "judgments-next", "judgments-add", "status"])
def test_short_commands_load_no_library_they_do_not_use(tmp_path, argv, allowed):
    """The whole program (main() as `cranfield` runs it): judging a document or asking for the next one loads the
    data libraries but no statistics (scipy), plotting, TUI or learning library."""
    import shutil
    camp = tmp_path / "demo"
    shutil.copytree(ROOT / "campaigns" / "demo", camp, ignore=shutil.ignore_patterns(".cranfield-*"))
    args = [a.format(c=camp) for a in argv]
    code = ("import contextlib, io, os, sys\nfrom cranfield.cli import main\nos.environ['CRANFIELD_ASSESSOR'] = 'ann'\n"
            f"sys.argv = ['cranfield', *{args!r}]\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
            "    try:\n        rc = main()\n    except SystemExit as exc:\n        rc = exc.code\n"
            "assert rc == 0 and out.getvalue(), (rc, out.getvalue())")
    assert _loaded_after(code) == sorted(allowed)


def test_light_names_match_the_implementations():
    from engine.planning import pool_experiments as experiments
    from engine.util import names
    from engine.pooling import SELECTORS, STATIC, STRATEGIES
    assert names.STATIC_STRATEGIES == tuple(STATIC) and names.ONLINE_STRATEGIES == tuple(SELECTORS)
    assert names.POOL_STRATEGIES == STRATEGIES
    assert experiments.DESIGNS is names.DESIGNS
    assert all(strategy in STRATEGIES for strategy, _ in names.DESIGNS.values())


def test_campaign_is_named_the_same_way_for_every_command():
    """--campaign DIR works for every command that takes a campaign; a positional DIR stays an alias."""
    from cranfield.cli import build_parser, campaign_as_option
    parser = build_parser()
    for argv in (["pool", "--campaign", "C", "--strategy", "depth"], ["pool", "C", "--strategy", "depth"],
                 ["judgments", "add", "--campaign=C", "401", "d1", "1"], ["judgments", "add", "C", "401", "d1", "1"],
                 ["ingest", "--campaign", "C"], ["status", "--campaign", "C"], ["tui", "--campaign", "C"],
                 ["eval", "--campaign", "C"], ["stability", "reduction", "--campaign", "C"]):
        args = parser.parse_args(campaign_as_option(parser, list(argv)))
        assert args.campaign == "C", argv
    args = parser.parse_args(campaign_as_option(parser, ["judgments", "add", "--campaign", "C", "401", "d1", "2"]))
    # the grade stays text for the strict grammar (engine.formats.grammar: argparse's int() would accept "1_0")
    assert (args.topic, args.doc, args.grade) == ("401", "d1", "2")


def test_measures_load_on_first_use():
    code = ("import sys, json\nfrom engine.measures import resolve\nresolve(['map', 'P.10'])\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('engine.measures.m_'))))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["engine.measures.m_P", "engine.measures.m_map"]
    from engine.measures import REGISTRY, load_all, resolve
    assert [r.measure.name for r in resolve(["P.5", "map"])] == ["map", "P"]       # registry order kept
    official = {r.measure.name for r in resolve(["official"])}                     # a nickname loads them all
    load_all()
    assert official == {m.name for m in REGISTRY.values() if "official" in m.nicknames} and len(official) >= 10


def test_nicknames_load_their_members_alone_and_list_every_member():
    """`NICKNAMES` lists what the modules declare; resolving a nickname in a fresh interpreter loads its
    members' modules alone and gives what it gives with every measure loaded."""
    from engine.measures import REGISTRY, load_all, resolve
    from engine.measures.registry import NICKNAMES, nickname_members
    load_all()
    declared = {n for m in REGISTRY.values() for n in m.nicknames}
    assert set(NICKNAMES) == declared
    for nick, members in NICKNAMES.items():
        assert list(members) == nickname_members(nick), nick
    code = ("import sys, json\nfrom engine.measures import resolve\n"
            "got = [(r.measure.name, r.params, r.names) for r in resolve(['all_trec'])]\n"
            "print(json.dumps([got, sorted(m for m in sys.modules if m.startswith('engine.measures.m_'))]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    got, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == sorted(f"engine.measures.m_{n}" for n in NICKNAMES["all_trec"])
    assert got == [[r.measure.name, list(r.params), r.names] for r in resolve(["all_trec"])]


def test_eval_read_without_argparse_as_the_parser_reads_it():
    """`cmd_eval.fast_args` gives what the parser gives for the forms it reads, and leaves every other form to
    the parser (None); `cranfield eval`'s common forms then start without importing argparse."""
    from cranfield.cli import build_parser
    from cranfield.cli.cmd_eval import fast_args
    parser = build_parser("eval")
    read = [["q", "r"], ["-m", "map", "q", "r"], ["q", "r1", "r2", "-q", "-m", "P.10", "-m", "ndcg_cut.10"],
            ["-q", "-c", "-J", "-n", "-m", "all_trec", "q", "r"], ["-m", "map", "-q"], [], ["-q", "-q", "q", "r"]]
    for argv in read:
        got = fast_args(argv)
        assert got is not None and vars(got) == vars(parser.parse_args(["eval", *argv])), argv
    left = [["q", "-m", "map", "r"], ["-m"], ["-m", "-q", "q", "r"], ["-qc", "q", "r"], ["--campaign", "C"],
            ["-M", "10", "q", "r"], ["--format", "csv", "q", "r"], ["-h"], ["-m=map", "q", "r"], ["", "r"],
            ["-", "r"], ["q", "r", "--", "-x"], ["-mmap", "q", "r"], ["--per-query", "q", "r"]]
    for argv in left:
        assert fast_args(argv) is None, argv
    demo = ROOT / "campaigns" / "demo"
    code = ("import contextlib, io, sys, json\nfrom cranfield.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['eval', '-m', 'map', {str(demo / 'judgments' / 'qrels.txt')!r}, "
            f"{str(demo / 'runs' / 'asterA1.txt')!r}])\nprint(json.dumps('argparse' in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False


def test_small_evaluations_keep_freed_memory_for_reuse():
    """On glibc the allocator takes the setting (a short `cranfield eval` on small files then pays no page
    fault twice for the same memory); elsewhere it says it did not apply."""
    code = "from engine.util.memory import keep_freed_memory\nprint(keep_freed_memory())"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    import platform
    expected = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert out.stdout.strip() == str(expected)


def test_small_evaluations_take_heap_memory_in_huge_pages_where_the_kernel_offers_them():
    """After `keep_freed_memory`, 16 MB of numpy arrays (1 MB each, from the heap) cost a few faults of 2 MB
    pages, not 4,096 of 4 KB, where transparent huge pages are on (`always` or `madvise`)."""
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    mode = thp.read_text() if thp.is_file() else ""
    code = ("import resource, numpy as np\nfrom engine.util.memory import keep_freed_memory\n"
            "ok = keep_freed_memory()\nf0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
            "arrays = [np.ones(1 << 17) for _ in range(16)]\n"
            "print(ok, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    ok, faults = out.stdout.split()
    if ok == "True" and ("[always]" in mode or "[madvise]" in mode):
        assert int(faults) < 2048, faults             # 4 KB pages alone: 4,096 faults


def test_eval_as_a_process_tunes_it_and_in_process_calls_change_nothing():
    """`cranfield eval` run as the program (main() reading sys.argv): one BLAS thread unless the user chose a
    number (the process then runs on its main thread alone), the start-up collection threshold, and every
    object frozen once the output is written; the same main() called with arguments, as a library caller's
    process calls it, leaves the environment, the collector and the threads as they were."""
    demo = ROOT / "campaigns" / "demo"
    files = [str(demo / "judgments" / "qrels.txt"), str(demo / "runs" / "asterA1.txt")]
    probe = ("import contextlib, gc, io, json, os, sys\nfrom cranfield.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             "    try:\n        rc = main({args})\n    except SystemExit as exc:\n        rc = exc.code\n"
             "tasks = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else None\n"
             "print(json.dumps([rc, 'map' in out.getvalue(), os.environ.get('OPENBLAS_NUM_THREADS'), "
             "gc.get_threshold()[0], gc.get_freeze_count() > 0, tasks]))")

    def run(args: str, argv: list[str], **extra) -> list:
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        env.update(PYTHONPATH=str(ROOT), **extra)
        code = f"import sys\nsys.argv = {['cranfield', *argv]!r}\n" + probe.format(args=args)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    from engine.util.memory import START_GC_THRESHOLD
    rc, printed, blas, threshold, frozen, tasks = run("", ["eval", "-m", "map", *files])
    assert (rc, printed, blas, threshold, frozen) == (0, True, "1", START_GC_THRESHOLD, True)
    assert tasks in (1, None)                      # no BLAS thread waiting beside the main one
    assert run("", ["eval", "-m", "map", *files], OPENBLAS_NUM_THREADS="2")[2] == "2"     # the user's choice
    rc, printed, blas, threshold, frozen, _ = run(repr(["eval", "-m", "map", *files]), ["x"])
    assert (rc, printed, blas, threshold, frozen) == (0, True, None, 700, False)
    rc, printed, blas, threshold, frozen, _ = run("", ["--help"])      # another command: not tuned
    assert (rc, blas, threshold, frozen) == (0, None, 700, False)


def test_eval_fast_args_equal_the_parser_on_generated_command_lines():
    """Command lines drawn from files, measures, the flags it reads and forms it must leave alone (`-qc`,
    `-mmap`, `--`, `-`, an empty word, -M N, --campaign): whatever `fast_args` reads, the parser reads the same
    way (and accepts)."""
    import contextlib
    import io

    from hypothesis import given, settings, strategies as st

    from cranfield.cli import build_parser
    from cranfield.cli.cmd_eval import fast_args
    parser = build_parser("eval")
    words = st.sampled_from(["q", "r", "r2", "-m", "map", "P.10", "-q", "-c", "-J", "-n", "-", "--", "-qc",
                             "-mmap", "", "-1", "a b", "-M", "5", "--campaign", "-h"])

    @settings(max_examples=400, deadline=None)
    @given(st.lists(words, max_size=7))
    def check(argv):
        got = fast_args(argv)
        if got is not None:
            with contextlib.redirect_stderr(io.StringIO()):
                want = parser.parse_args(["eval", *argv])
            assert vars(got) == vars(want), argv

    check()
