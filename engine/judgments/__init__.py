"""Judgments as recorded: the append-only judgment log (locked appends, undo, merging) and its repair, judgment
sources kept apart, agreement between sources, simulated judges.
"""
