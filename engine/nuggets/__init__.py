"""Nugget-based evaluation of generated answers (TREC RAG style): the answer-run reader, the nugget and
assignment stores, the nugget scores and citation support, automatic assignment through the automatic
judge's endpoint, and simulated RAG campaigns with a known truth. Documented in docs/rag.md."""
