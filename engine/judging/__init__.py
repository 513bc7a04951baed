"""The judging workflow over pools: the next document, checked recording, sessions and document leases, and the
automatic (LLM) judge.
"""
