"""Simulated campaigns with complete ground truth, at any size (written in bounded memory)."""
