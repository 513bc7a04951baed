"""NIST's other official evaluators and trec_eval's special modes: `-R` judgment formats (prefs, qrels_prefs,
qrels_jg), `-Z` z-scores, `--strict-trec-eval`, ndeval and gdeval.
"""
