"""@cond: any measure on condensed lists (unjudged documents removed), e.g. map@cond, P@cond.10, Q@cond."""
from .condensed import condensed_variant
from .registry import VARIANT_HOOKS

if condensed_variant not in VARIANT_HOOKS:
    VARIANT_HOOKS.append(condensed_variant)
