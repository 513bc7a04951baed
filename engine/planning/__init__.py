"""Cost and planning: the assessor-time cost model, the cost-benefit planner and pool experiments against
simulated truth.
"""
