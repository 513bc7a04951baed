"""RankEff (Gronqvist; Ahlgren and Gronqvist 2006; Buttcher et al. 2007 sec. 2)."""
from .preference import rankeff
from .registry import measure


@measure("RankEff", extension=True, nicknames={"incomplete"})
def RankEff(r, params=()):
    """1/(R N) * sum over retrieved relevant of judged non-relevant ranked below (unretrieved count below)."""
    return rankeff(r)
