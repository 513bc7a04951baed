"""Where the bundled demo campaign lies: in an installed wheel, the package data `cranfield/_demo` beside the
engine (pyproject.toml maps it onto campaigns/demo); in a checkout or an editable install, campaigns/demo
beside the engine. The bundle is only ever copied, never opened in place."""
from __future__ import annotations

from pathlib import Path

from ..errors import CranfieldError


def bundled_demo() -> Path:
    """The bundled demo campaign directory; a clear error when neither place holds it."""
    top = Path(__file__).resolve().parents[2]          # the folder holding engine/ (site-packages or the checkout)
    places = (top / "cranfield" / "_demo", top / "campaigns" / "demo")
    for place in places:
        if (place / "campaign.yaml").is_file():
            return place
    raise CranfieldError(f"the bundled demo campaign is missing (looked in {places[0]} and {places[1]}); "
                         f"reinstall cranfield, or run it from a checkout of its repository")
