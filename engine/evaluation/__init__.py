"""Evaluation: `evaluate()` and the trec_eval text writer, the `Evaluator` API and its input adapters, the one
campaign seam (`seam.evaluate_campaign`), the Parquet run store, streaming by topic blocks, the result cache
and the pandas-free start-up path.
"""
