"""The Dagster priorities of the training stage's steps."""

# The training stage runs two steps at a time (pipelines/definitions.py); when more are ready, the
# executor starts the higher priority first, and the asset checks (priority 0) last. Longest chain
# first: remedial_trajectories -> RFT -> AdaGRPO, then step_datasets -> HiFPO, then fork_pairs ->
# GRSD (measured in a default run: with only the first two chains tagged, the checks took the slots
# GRSD's chain needed once HiFPO ended).
RFT_CHAIN = {"dagster/priority": "3"}
HIFPO_CHAIN = {"dagster/priority": "2"}
GRSD_CHAIN = {"dagster/priority": "1"}
