"""Small helpers every layer may use: lazy imports, atomic file writes, process pools, campaign path
confinement, and the light name lists the command line shows.
"""
