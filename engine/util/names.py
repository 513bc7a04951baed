"""Names the command line lists (pool strategies, experiment designs), kept free of heavy imports so
`cranfield --help` does not load pandas; the implementing modules check they match (tests/test_startup.py)."""
from __future__ import annotations

STATIC_STRATEGIES = ("depth", "take_n", "uniform", "stratified", "statap")
FUSION_STRATEGIES = ("rrf", "rbp")
ONLINE_STRATEGIES = ("mtf", "hedge", "mtc")
POOL_STRATEGIES = STATIC_STRATEGIES + FUSION_STRATEGIES + ONLINE_STRATEGIES

# experiment design label -> (pool strategy, measure computing the estimate)
DESIGNS: dict[str, tuple[str, str]] = {
    "xinfAP@stratified": ("stratified", "xinfAP"),
    "infAP@uniform": ("uniform", "infAP"),
    "AP@uniform": ("uniform", "map"),
    "AP@stratified": ("stratified", "map"),
    "statAP@statap": ("statap", "statAP"),
    "AP@depth": ("take_n", "map"),
    "AP@mtf": ("mtf", "map"),
    "AP@hedge": ("hedge", "map"),
    "AP@mtc": ("mtc", "map"),
}
DEFAULT_DESIGNS = ("xinfAP@stratified", "infAP@uniform", "AP@uniform", "statAP@statap", "AP@depth", "AP@mtc")


def natural_key(topic: object) -> tuple:
    """Sort key of the natural topic order used by every face: digit runs compare as numbers, the rest
    as text ("2" < "10", "q2" < "q10", numeric ids before named ones); any Unicode text is a valid id."""
    import re
    parts = re.split(r"(\d+)", str(topic))            # even places text, odd places decimal digit runs
    return tuple((int(c), c) if i % 2 else c for i, c in enumerate(parts))


def natural_sorted(topics) -> list:
    """The topics (any iterable of ids) in natural order."""
    return sorted(topics, key=natural_key)


# ----------------------------------------------------------------------------- names that become files or text
MAX_NAME_CHARS = 100
NAME_RULE = (f"a name is 1 to {MAX_NAME_CHARS} characters of text, without / or \\, not starting with '.', "
             "without control characters (NUL, ESC, tab, line breaks, ...) or lone surrogates")


def _control(c: str) -> bool:
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F or 0xD800 <= o <= 0xDFFF


def name_problem(value: object, what: str = "name") -> str | None:
    """None when `value` may be a run tag, answer run id, topic id or pool name (it becomes a file name
    and terminal text), else what is wrong with it (shown escaped) and the rule."""
    if not isinstance(value, str):
        return f"{what} must be text, found {type(value).__name__}"
    bad = None
    if not value:
        bad = "is empty"
    elif len(value) > MAX_NAME_CHARS:
        bad = f"is {len(value)} characters long"
    elif "/" in value or "\\" in value:
        bad = "contains a path separator"
    elif value.startswith("."):
        bad = "starts with '.'"
    elif any(_control(c) for c in value):
        bad = "contains a control character or a lone surrogate"
    if bad is None:
        return None
    return f"{what} '{shown(value[:MAX_NAME_CHARS + 20])}' {bad}; {NAME_RULE}"


def check_name(value: object, what: str = "name") -> str:
    """`value` when it passes `name_problem`, else a CranfieldError stating the rule."""
    msg = name_problem(value, what)
    if msg is not None:
        from ..errors import CranfieldError
        raise CranfieldError(msg)
    return value        # type: ignore[return-value]


_SHOWN: dict[str, object] = {}


def _pattern(keep: str):
    """The compiled class of the characters `shown` escapes, but those in `keep` (cached per `keep`)."""
    pat = _SHOWN.get(keep)
    if pat is None:
        import re
        ranges = "".join(f"\\x{o:02x}" for o in range(0x20) if chr(o) not in keep)
        pat = _SHOWN[keep] = re.compile(f"[{ranges}\\x7f-\\x9f\\ud800-\\udfff]")
    return pat


def _escape(m) -> str:
    o = ord(m.group(0))
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def shown(text: object, keep: str = "") -> str:
    """`text` safe to print on a terminal or in a page: control characters (C0 but those in `keep`, DEL,
    C1) and lone surrogates written as Python escapes (ESC as \\x1b); everything else unchanged."""
    s = str(text)
    if s.isascii():                  # most output: one byte-level pass (about twice the regex scan's speed)
        b = s.encode("ascii")
        if len(b.translate(None, _ascii_controls(keep))) == len(b):
            return s
    pat = _pattern(keep)
    return pat.sub(_escape, s) if pat.search(s) else s          # one C-speed scan for clean text


_CONTROLS: dict[str, bytes] = {}


def _ascii_controls(keep: str) -> bytes:
    """The ASCII control bytes `shown` escapes (C0 but those in `keep`, and DEL), cached per `keep`."""
    got = _CONTROLS.get(keep)
    if got is None:
        got = _CONTROLS[keep] = bytes(o for o in [*range(0x20), 0x7f] if chr(o) not in keep)
    return got


class ShownStream:
    """A text stream that writes through `shown` (line breaks and tabs kept, and a carriage return that
    starts a write: a progress bar redrawing its line), so no id printed by a command can retitle or
    clear a terminal; non-encodable characters become backslash escapes instead of an error."""

    def __init__(self, stream):
        self._stream = stream
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass

    def write(self, s: str) -> int:
        if s.startswith("\r"):
            self._stream.write("\r" + shown(s[1:], "\n\t"))
        else:
            self._stream.write(shown(s, "\n\t"))
        return len(s)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
