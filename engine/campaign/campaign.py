"""Campaign directories: `campaign.yaml` (validated against `SCHEMA`), runs/, topics/, judgments/.

`load_campaign(path)` validates the configuration and returns a `Campaign` whose methods read the
inputs on demand (re-read when a file changes). Judgments merge the imported files with the
assessor log `judgments/log.jsonl`, repeated judgments resolved by `judgments.conflict_rule`.
Layout and schema: docs/campaign-format.md.
"""
from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import CranfieldError, FormatError, Problem, Warnings
from .config import CONFIG_NAME, read_config, validate_config  # noqa: F401  (validate_config: public here too)
from ..formats.files import PathLike, str_series
from ..formats.detect import read_judgments
from ..formats.qrels import read_qrels
from ..formats.runs import read_runs, warn_unknown_topics
from ..util.confine import CAMPAIGN_PATHS, real_paths
from ..util import fs

if TYPE_CHECKING:
    import pandas as pd

LOG_FILE = Path(CAMPAIGN_PATHS["log"]).name     # the assessor log in judgments/ (not an imported file)
LEASES_FILE = Path(CAMPAIGN_PATHS["leases"]).name   # the judging leases in judgments/ (never judgments)
TOKENS_FILE = Path(CAMPAIGN_PATHS["serve_tokens"]).name   # cranfield serve's assessor tokens (never judgments)
_LOG_NAMES = ("LOG_COLUMNS", "LOG_NAME", "log_judgments", "merge_judgments", "read_judgment_log")


def __getattr__(name: str):
    """The assessor log's names (engine.judgments.log), public here too, imported on first use: that
    module imports pandas, which `cranfield eval --campaign` on the run store does not need."""
    if name in _LOG_NAMES:
        from ..judgments import log
        return getattr(log, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


RUN_SUFFIXES = {".txt", ".run", ".res", ".trec", ".runs", ""}
JUDGMENT_SUFFIXES = {".qrels", ".prels", ".sample", ".txt", ".rels"}
TOPIC_SUFFIXES = {".txt", ".sgml", ".sgm", ".trec", ".tsv", ".jsonl", ".json"}
IGNORED_NAMES = {"readme", "readme.md", "readme.txt", "license", ".gitkeep", ".gitignore"}


_SETTLED_NS = 2_000_000_000   # a folder changed this long before its listing has its change in its times


def _fingerprint(paths: list[Path]) -> tuple:
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))   # ctime: an edit
        except OSError:                                                                  # that keeps mtime
            out.append((str(p), -1, -1, -1, -1))
    return tuple(out)


def _visible_files(folder: Path) -> list[Path]:
    if not fs.is_dir(folder):
        return []
    kinds = dict(fs.stats(folder))        # one anchored walk for every entry (a link: its target's stat)
    out = []
    for p in fs.glob(folder):
        if p.name.startswith("."):
            continue
        st = kinds.get(p.name)            # (absent: a link the anchored open refuses, or gone since)
        if not (stat.S_ISDIR(st.st_mode) if st is not None else _is_folder(p)):
            out.append(p)
    return out


def _is_folder(p: Path) -> bool:
    """Whether `p` is a folder (a link refused by the anchored open: what its target is, by stat alone;
    it is refused where it is read)."""
    try:
        return fs.is_dir(p)
    except FormatError:
        return os.path.isdir(p)


def _base_suffix(p: Path) -> str:
    name = p.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


class Campaign:
    """A campaign directory. Inputs are read on demand and re-read when their files change."""

    def __init__(self, root: Path, config: dict, warnings: Warnings):
        self.root = root
        self.config = config
        self.warnings = warnings
        self._memo: dict[str, tuple[tuple, Any]] = {}

    # ------------------------------------------------------------------ configuration views
    @property
    def name(self) -> str:
        return self.config["name"]

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    def scale(self) -> dict[int, dict]:
        """Grade -> {label, gain}."""
        return self.config["relevance"]["scale"]

    def gains(self) -> dict[int, float]:
        return {g: v["gain"] for g, v in self.scale().items()}

    def binary_threshold(self) -> int:
        return int(self.config["relevance"]["binary_threshold"])

    def measures(self) -> list[str]:
        """The measures shown by default (evaluation.measures), as Cranfield specs (ir_measures' names such
        as nDCG@10 are read by the one request parser, engine.measures.names)."""
        from ..measures.names import translate
        return [translate(m)[0] for m in self.config["evaluation"]["measures"]]

    def depth(self) -> int:
        return int(self.config["evaluation"]["depth"])

    def conflict_rule(self) -> str:
        return self.config["judgments"]["conflict_rule"]

    def judging(self) -> dict:
        """Judging-session settings (judging: guidelines, random_order, double_fraction, lease_seconds,
        auto_source), the schema's defaults for what the file leaves out."""
        from .config import section_defaults
        return {**section_defaults("judging"), **{k: v for k, v in (self.config.get("judging") or {}).items()
                                                   if v is not None}}

    def pool(self) -> dict:
        """The pool: section (strategy, depth, ... as `cranfield pool` / `simulate` write it), the schema's
        defaults for strategy and depth when it leaves them out."""
        raw = self.config.get("pool")
        raw = raw if isinstance(raw, dict) else {}
        from .config import section_defaults
        return {**section_defaults("pool"), **{k: v for k, v in raw.items() if v is not None}}

    def categories(self) -> dict[str, str]:
        """Topic id -> query category (topics.categories)."""
        return dict(self.config["topics"]["categories"])

    def targets(self) -> dict[str, int]:
        """Topic id -> judgment target (topics.targets)."""
        return dict(self.config["topics"]["targets"])

    # ------------------------------------------------------------------ files
    def _confine(self, path: Path, source: str, what: str, real: Path | None = None) -> None:
        """Refuse (without reading it) a file that resolves outside the campaign (engine.util.confine);
        `real`: the path already resolved (`real_paths`)."""
        from ..util.confine import allowed_roots, refuse_outside
        if "roots" not in self.__dict__:
            self.roots = allowed_roots(self.root, self.config)
        refuse_outside(path, self.roots, source, what, real)

    def path(self, name: str, *parts: str) -> Path:
        """A campaign path of engine.util.confine.CAMPAIGN_PATHS, refused when a link takes it outside the campaign."""
        from engine.util.confine import campaign_path
        if "roots" not in self.__dict__:
            from engine.util.confine import allowed_roots
            self.roots = allowed_roots(self.root, self.config)
        return campaign_path(self.root, name, *parts, roots=self.roots)

    def _scan(self, folder: str, suffixes: set[str], what: str, skip: set[str] = frozenset(),
              real: dict[Path, Path] | None = None) -> list[Path]:
        """The files of `folder` with a name ending in `suffixes` (others warned about), each confined;
        `skip`: the app's own files, never read here (with what it sets aside beside them: NAME.torn,
        NAME.rejected); `real` receives each file's resolved path."""
        out = []
        found = [p for p in _visible_files(self.path(folder))
                 if p.name not in skip and p.name.rsplit(".", 1)[0] not in skip]
        for p, rp in zip(found, real_paths(found)):      # the folder resolved once, not per file
            self._confine(p, str(self.root / folder), p.name, rp)
            if real is not None:
                real[p] = rp
            if _base_suffix(p) in suffixes:
                out.append(p)
            elif p.name.lower() not in IGNORED_NAMES and not p.name.lower().endswith(".md"):
                self._warn_once(str(p), None,
                                f"not read as {what} (expected a name ending in "
                                f"{', '.join(sorted(s for s in suffixes if s))}, optionally .gz); ignored")
        return out

    def _warn_once(self, path: str, line: int | None, msg: str) -> None:
        if not any(p.path == path and p.message == msg for p in self.warnings):
            self.warnings.add(path, line, msg)

    def run_files(self) -> list[Path]:
        """Run files: everything in runs/ plus files named by runs.<tag>.file. The listing is kept while
        runs/ (its entries: names are added, removed or replaced only by changing the folder's times) and
        the configuration's run entries stay the same, and runs/ was last changed well before it was
        made (a change within a coarse clock tick of the listing leaves the folder's times as they were);
        a campaign of 1,000 runs was listed a dozen times per open."""
        key = self._runs_key()
        hit = self.__dict__.get("_run_files")
        if key is not None and hit is not None and hit[0] == key:
            return list(hit[1])
        files = self._list_run_files()
        if key is not None and key[0] < time.time_ns() - _SETTLED_NS:
            self._run_files = (key, tuple(files))
        return files

    def _runs_key(self) -> tuple | None:
        """What a run listing depends on: the newest change time of runs/ and of the folders of the files
        campaign.yaml names (first), their stats (followed), those run entries, the files set aside; None
        when a folder cannot be looked at."""
        runs = self.config.get("runs") or {}
        named = tuple((str(t), str(m.get("file"))) for t, m in runs.items() if isinstance(m, dict) and m.get("file"))
        root = str(self.root)
        folders = dict.fromkeys([os.path.join(root, "runs"),
                                 *(os.path.dirname(os.path.join(root, f)) for _, f in named)])
        stats = []
        for d in folders:
            try:
                st = fs.stat(d)
            except (OSError, FormatError):
                return None
            stats.append((str(d), st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_size))
        skip = tuple(sorted(map(str, getattr(self, "skip_runs", None) or ())))
        return (max(max(x[1], x[2]) for x in stats), tuple(stats), named, skip)

    def _list_run_files(self) -> list[Path]:
        real: dict[Path, Path] = {}
        files = self._scan("runs", RUN_SUFFIXES, "a run", real=real)
        seen = {real[q] for q in files}     # once: resolving inside the loop was cubic in runs
        skip = getattr(self, "skip_runs", None)   # files set aside (a UI keeps opening without them)
        if skip:
            files = [q for q in files if real[q] not in skip]
            seen |= set(skip)
        named: dict[Path, str] = {}
        entries = [(tag, meta.get("file")) for tag, meta in self.config["runs"].items() if meta.get("file")]
        paths = [self.root / f for _, f in entries]
        for (tag, f), p, rp in zip(entries, paths, real_paths(paths)):
            self._confine(p, str(self.config_path), f"runs.{tag}.file", rp)
            if p.is_dir():
                raise FormatError(Problem(str(self.config_path), None,
                                          f"runs.{tag}.file: {f} is a directory, expected a run file"),
                                  hint="name the run file itself, e.g. runs/" + f"{tag}.txt")
            if not p.exists():
                raise FormatError(Problem(str(self.config_path), None,
                                          f"runs.{tag}.file: {f} does not exist"),
                                  hint="fix the path (relative to the campaign directory) or remove the key")
            if rp in named:
                raise FormatError(Problem(str(self.config_path), None,
                                          f"runs.{named[rp]}.file and runs.{tag}.file both name {f}"),
                                  hint="each run needs its own file: fix one of the two entries")
            named[rp] = tag
            if rp not in seen:
                seen.add(rp)
                files.append(p)
        return files

    def judgment_files(self) -> list[Path]:
        """Imported judgment files in judgments/ (not the log, not the judging leases or serve tokens, nor their .torn /
        .rejected side files)."""
        return self._scan("judgments", JUDGMENT_SUFFIXES, "judgments", skip={LOG_FILE, LEASES_FILE, TOKENS_FILE})

    def log_path(self) -> Path:
        return self.path("log")

    def topic_files(self) -> list[Path]:
        return self._scan("topics", TOPIC_SUFFIXES, "topics")

    def input_files(self) -> list[Path]:
        """Every file evaluation results depend on (for cache keys)."""
        files = [self.config_path, *self.run_files(), *self.judgment_files()]
        if self.log_path().is_file():
            files.append(self.log_path())
        return files

    def _cached(self, name: str, files: list[Path], make: Callable[[], Any]) -> Any:
        fp = _fingerprint(files)
        hit = self._memo.get(name)
        if hit is not None and hit[0] == fp:
            return hit[1]
        val = make()
        self._memo[name] = (fp, val)
        return val

    # ------------------------------------------------------------------ inputs
    def runs(self) -> pd.DataFrame:
        """All runs: run, topic, doc, rank, score (categorical run/topic/doc; each run in trec_eval
        order), read from the run store (the text files only when they changed, or when the store
        cannot be written)."""
        files = self.run_files()
        return self._cached("runs", files + self.topic_files(), lambda: self._read_runs(files))

    def store(self):
        """The campaign's run store (`engine.evaluation.store.RunStore`) brought up to date with the run files,
        or None when the campaign directory cannot be written (read-only)."""
        files = self.run_files()
        return self._cached("store", files, lambda: self._sync_store(files))

    def _sync_store(self, files: list[Path]):
        from ..evaluation.store import RunStore
        w = Warnings()
        st = RunStore(self.root, warnings=self.warnings)
        try:
            st.sync(files, w)
        except OSError as exc:
            self._warn_once(str(self.root), None, f"the run store cannot be written ({exc.strerror or exc}); "
                                                  f"run files are read as text every time")
            return None
        finally:
            for p in w:
                self._warn_once(p.path, p.line, p.message)
        return st

    def run_renames(self) -> dict[str, str]:
        """File tag -> campaign.yaml key, for run files named by runs.<key>.file whose tag differs."""
        files = self.run_files()
        return self._cached("renames", files, lambda: self._run_renames(files))

    def _run_renames(self, files: list[Path]) -> dict[str, str]:
        named = [(tag, self.root / m["file"]) for tag, m in self.config["runs"].items() if m.get("file")]
        by_file = dict(zip(real_paths([p for _, p in named]), (tag for tag, _ in named)))
        rename = {}
        st = self.store() if by_file else None      # once: per file it re-scanned runs/ (quadratic)
        for p, rp in zip(files, real_paths(files) if by_file else ()):
            want = by_file.get(rp)
            if want is None:
                continue
            got = self._tag_of(p, st, rp)
            if got is not None and got != want:
                rename[got] = want
                self._warn_once(str(p), None, f"run tag {got!r} differs from its campaign.yaml entry "
                                              f"runs.{want}; evaluated as run {want!r}")
        return rename

    def _tag_of(self, path: Path, st=None, real: Path | None = None) -> str | None:
        """A run file's tag: from the run store's manifest (`st`, else the campaign's) when it holds the
        file, else its first line (`real`: the path resolved, when known)."""
        st = st if st is not None else self.store()
        if st is not None:
            e = st.manifest["files"].get(str(real if real is not None else Path(path).resolve()))
            if e is not None:
                return e.get("tag")
        return _first_tag(path)

    def _read_runs(self, files: list[Path]) -> pd.DataFrame:
        st = self.store()
        runs = st.frame() if st is not None else read_runs(files, self.warnings)
        rename = self.run_renames()
        if rename and len(runs):
            from ..ranking.join import rename_runs
            runs = rename_runs(runs.copy(), rename)
            runs["run"] = str_series(runs["run"].astype(object).to_numpy(object))
        self._warn_runs(runs)
        return runs

    def check_runs(self, store) -> None:
        """The warnings reading the runs gives (tags without a run file, topics not in topics/), from the
        store's index alone: for evaluations that read the store's parts without `runs()`."""
        ix = store.index[["run", "topic"]]
        rename = self.run_renames()
        if rename and len(ix):
            ix = ix.assign(run=ix["run"].map(lambda r: rename.get(r, r)))
        self._warn_runs(ix)

    def _warn_runs(self, runs: pd.DataFrame) -> None:
        listed = set(self.config["runs"])
        present = set(runs["run"].unique()) if len(runs) else set()
        for tag in sorted(listed - present):
            self._warn_once(str(self.config_path), None, f"runs.{tag}: no run file with this tag in runs/")
        topics = self.topics()
        if len(topics) and len(runs):
            w = Warnings()
            warn_unknown_topics(runs, topics["topic"], w, source=str(self.root / "runs"))
            for p in w:
                self._warn_once(p.path, p.line, p.message)

    def topics(self) -> pd.DataFrame:
        """Topics from topics/: topic, title, description, narrative (+ file, line)."""
        files = self.topic_files()
        return self._cached("topics", files, lambda: _read_topic_files(files))

    def log(self) -> pd.DataFrame | None:
        """The raw assessor log (every entry), or None when there is none."""
        p = self.log_path()
        if not p.is_file():
            return None
        from ..judgments.log import read_judgment_log
        return self._cached("log", [p], lambda: read_judgment_log(p, self.warnings))

    def qrels(self) -> pd.DataFrame:
        """Merged judgments: imported files (by name) then the log, resolved by judgments.conflict_rule;
        the canaries planted in pools (engine.judgments.audit) left out."""
        from ..judgments.canaries import canary_path, drop_canaries
        files = self.judgment_files()
        p = self.log_path()
        return self._cached("qrels", files + [p, self.config_path, canary_path(self.root)],
                            lambda: drop_canaries(self.root, self._read_qrels(files)))

    def _read_qrels(self, files: list[Path]) -> pd.DataFrame:
        from ..judgments.log import log_judgments, merge_judgments
        rule = self.conflict_rule()
        frames = []
        problems: list[Problem] = []
        for f in files:
            try:
                frames.append(read_judgments(f, self.warnings, rule=rule,
                                             kind=_declared_kind(f, self.config["judgments"].get("format"))))
            except FormatError as exc:
                problems.extend(exc.problems)
        if problems:
            raise FormatError(problems, hint="fix the judgment files named above")
        log = self.log()
        from_log = log is not None and len(log)
        if from_log:
            frames.append(log_judgments(log, str(self.log_path()), self.warnings))
        q = merge_judgments(frames, rule, self.warnings, str(self.root / "judgments"),
                            resolved=not from_log)        # the readers resolved each file by `rule`
        self.check_grades(q["grade"].to_numpy())
        return q

    def judgment_file(self) -> Path | None:
        """The one file the campaign's judgments are, as it stands (one qrels file in judgments/, no
        assessor log: `qrels()` merges nothing), else None."""
        files = self.judgment_files()
        if len(files) != 1 or self.log_path().is_file():
            return None
        return files[0] if _declared_kind(files[0], self.config["judgments"].get("format")) in (None, "qrels") else None

    def check_grades(self, grades: np.ndarray) -> None:
        """Warn about judgment grades the relevance scale does not list."""
        if not len(grades):
            return
        grades = set(np.unique(grades).tolist())
        unknown = sorted(g for g in grades if g >= 0 and g not in self.scale())
        if unknown:
            self._warn_once(str(self.config_path), None,
                            f"relevance.scale: judgments use grade(s) {unknown} that the scale does not list; "
                            f"add them with a label and gain")

    def truth_qrels(self) -> pd.DataFrame | None:
        """Complete ground-truth judgments of a simulated campaign (truth/qrels.txt), else None."""
        p = self.path("truth", "qrels.txt")
        if not p.is_file():
            return None
        self._confine(p, str(self.root / "truth"), "qrels.txt")
        return self._cached("truth", [p], lambda: read_qrels(p, self.warnings)[["topic", "doc", "grade"]])

    def run_meta(self) -> pd.DataFrame:
        """Per run: run, group, type, pooled, file. Runs not listed in campaign.yaml get group = their tag,
        type automatic, pooled true."""
        st = self.store()
        if st is not None:                       # the store knows the tags: no run table needed
            rename = self.run_renames()
            tags = list(dict.fromkeys(rename.get(t, t) for t in st.runs))
        else:
            runs = self.runs()
            tags = list(dict.fromkeys(runs["run"].tolist())) if len(runs) else []
        files = self.run_files()
        file_of = {}
        for p, rp in zip(files, real_paths(files)):
            t = self._tag_of(p, st, rp)
            if t is not None:
                file_of.setdefault(t, p)
        rows = []
        for tag in tags:
            m = self.config["runs"].get(tag, {})
            f = m.get("file") or (os.path.relpath(file_of[tag], self.root) if tag in file_of else "")
            rows.append((tag, str(m.get("group", tag)), str(m.get("type", "automatic")),
                         bool(m.get("pooled", True)), str(f)))
        import pandas as pd
        return pd.DataFrame(rows, columns=["run", "group", "type", "pooled", "file"]).astype(
            {"run": object, "group": object, "type": object, "pooled": bool, "file": object})

    # ------------------------------------------------------------------ evaluation
    def eval_options(self, **options):
        """EvalOptions from the campaign (binary_threshold -> rel_level, depth -> max_depth) and overrides."""
        from ..ranking.ranked import EvalOptions
        kw = {"rel_level": self.binary_threshold(), "max_depth": self.depth()}
        kw.update({k: v for k, v in options.items() if v is not None})
        return EvalOptions(**kw)

    def evaluate(self, measures=None, **options) -> pd.DataFrame:
        """Long table run, topic, measure, value for `measures` (default: evaluation.measures), cached
        under .cranfield-cache/ and recomputed when an input file changes."""
        from ..evaluation.cache import cached_evaluate
        from ..measures.names import evaluate_named, plain
        names = measures if measures is not None else self.measures()
        if plain(names):
            return cached_evaluate(self, names, self.eval_options(**options))
        # ir_measures' names (nDCG@10, P(rel=2)@10, ...): one cached evaluation per set of options they imply
        return evaluate_named(names, self.eval_options(**options), lambda specs, opt: cached_evaluate(self, specs, opt))

    def reload(self) -> None:
        """Forget what was read (files are re-read on the next call)."""
        self._memo.clear()


def _declared_kind(path: Path, declared: str | None) -> str | None:
    """judgments.format for a file whose name does not say its format, else None (the name decides)."""
    from engine.formats.detect import JUDGMENT_SUFFIXES, _base_suffix
    return None if not declared or declared == "auto" or JUDGMENT_SUFFIXES.get(_base_suffix(path)) else declared


def _first_tag(path: Path) -> str | None:
    """The tag (6th field) of a run file's first data line, or None."""
    from ..formats.files import read_head
    data = read_head(path)
    if data is None:
        return None
    for ln in data.split(b"\n"):
        t = ln.split()
        if t and not t[0].startswith(b"#"):
            return t[5].decode("utf-8", "replace") if len(t) >= 6 else None
    return None


def _read_topic_files(files: list[Path]) -> pd.DataFrame:
    import pandas as pd
    from ..formats.topics import empty_topics, read_topics
    frames, problems = [], []
    seen: dict[str, str] = {}
    for f in files:
        try:
            t = read_topics(f)
        except FormatError as exc:
            problems.extend(exc.problems)
            continue
        for tid, ln in zip(t["topic"], t["line"]):
            if tid in seen:
                problems.append(Problem(str(f), int(ln), f"topic {tid} is also defined in {seen[tid]}"))
            else:
                seen[tid] = f"{f}:{ln}"
        t["file"] = str(f)
        frames.append(t)
    if problems:
        raise FormatError(problems, hint="every topic id must be defined once across topics/")
    if not frames:
        e = empty_topics()
        e["file"] = pd.Series([], dtype=object)
        return e
    return pd.concat(frames, ignore_index=True)


def load_campaign(path: PathLike, warnings: Warnings | None = None) -> Campaign:
    """Open a campaign directory (or its campaign.yaml), validating the configuration."""
    p = Path(path)
    if p.is_file() and p.name == CONFIG_NAME:
        p = p.parent
    if not p.exists():
        raise CranfieldError(f"{p}: no such directory; create a campaign with `cranfield init {p}`")
    if not p.is_dir():
        raise CranfieldError(f"{p}: not a directory (a campaign is a directory holding {CONFIG_NAME})")
    cfg_path = p / CONFIG_NAME
    if not cfg_path.is_file():
        raise CranfieldError(f"{p}: not a campaign directory (no {CONFIG_NAME}); "
                             f"create one with `cranfield init {p}`")
    w = warnings if warnings is not None else Warnings()
    from engine.util.confine import campaign_path
    # the directory alone: campaign.yaml's own allow_outside roots are not trusted for itself (confine.campaign_roots)
    campaign_path(p, "config", roots=[p.resolve()])
    cfg = read_config(cfg_path)
    return Campaign(p, cfg, w)
