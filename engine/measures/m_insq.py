"""insq: a C/W/L measure of cwl_eval (defined with the others in engine.measures.cwl)."""
from . import cwl  # noqa: F401  (registers the C/W/L measures)
