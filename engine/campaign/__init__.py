"""Campaign operations: the campaign directory and campaign.yaml, intake of submissions, status, participant
reports, experiment tables, run comparison, and campaign-level experiments (in memory or streamed over the
run store).
"""
