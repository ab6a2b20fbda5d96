"""The embedded base policy: its pretraining recipe (generic grounding, episode-context and page-action
skills), the bundled checkpoint (`checkpoint/`) and its provenance."""
