"""Small helpers every layer may use: lazy imports, atomic file writes, process pools, campaign path
confinement, the light name lists the command line shows, the one client for model calls
(modelclient) and the prompts it sends (prompts).
"""
