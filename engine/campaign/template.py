"""The campaign.yaml a new campaign starts from (`cranfield init`), written from the schema
(engine.campaign.config.SCHEMA): every section with its default values, each key's `doc` as a comment,
keys without a default and the optional sections as commented-out lines. Reading it back gives the
schema's defaults."""
from __future__ import annotations

import json

import yaml

from .config import SCHEMA

HEADER = ("# Cranfield campaign configuration (format: docs/campaign-format.md).\n"
          "# Put run files in runs/, topics in topics/ and imported judgments in judgments/;\n"
          "# assessors' judgments are appended to judgments/log.jsonl.\n")
_COMMENT_AT = 34            # column of the comments after a value
OPTIONAL = ("judging", "answers", "allow_outside")   # written commented out: added when needed


def _flow(value) -> str:
    """A value as one line of YAML flow style."""
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, sort_keys=False,
                          width=10_000).strip().removesuffix("\n...").removesuffix("...").strip()


def _line(text: str, doc: str | None) -> str:
    return (f"{text.ljust(_COMMENT_AT - 1)} # {doc}" if doc else text).rstrip() + "\n"


def _hint(node: dict) -> str:
    if node["kind"] == "enum":
        return " | ".join(map(str, node["values"]))
    return ""


def _doc(node: dict) -> str | None:
    parts = [p for p in (_hint(node), node.get("doc")) if p]
    return ": ".join(parts) if parts else None


def _section(key: str, node: dict, indent: str) -> str:
    """One key of a map node: its default (nested maps expanded), else a commented-out line."""
    kind = node["kind"]
    if "default" not in node or node["default"] is None:
        return _line(f"{indent}# {key}:", _doc(node))
    if kind == "map" and node.get("keys"):
        body = "".join(_section(k, sub, indent + "  ") for k, sub in node["keys"].items())
        return _line(f"{indent}{key}:", node.get("doc")) + body
    if kind == "dict" and isinstance(node["default"], dict) and node["default"]:
        out = _line(f"{indent}{key}:", _doc(node))
        for k, v in node["default"].items():
            out += f"{indent}  {k}: {_flow(v)}\n"
        return out
    return _line(f"{indent}{key}: {_flow(node['default'])}", _doc(node))


def campaign_template(name: str) -> str:
    """campaign.yaml text for a new campaign called `name`: the schema's defaults, commented."""
    out = [HEADER, "\n", _line(f"name: {json.dumps(name, ensure_ascii=False)}", "required")]
    for key, node in SCHEMA["keys"].items():
        if key == "name":
            continue
        if node["kind"] == "any":
            out.append(("\n" if not out[-1].lstrip("\n").startswith("# ") else "") + _line(f"# {key}:", node.get("doc")))
            continue
        text = _section(key, node, "")
        if key in OPTIONAL:
            text = "".join("# " + (ln.replace("# ", "", 1) if ln.lstrip().startswith("# ") else
                                   ln.replace("   # ", " # ", 1)) for ln in text.splitlines(keepends=True))
        out.append("\n" + text)
    return "".join(out)
