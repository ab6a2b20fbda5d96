"""Domain logic of the pipeline: actions, prompts, rewards, rollout, critic, filtering, forks.

No Dagster or torch imports here; assets call into this package.
"""
