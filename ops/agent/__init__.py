"""The agent: the episode model and the interfaces the loop drives, the policy's prompts and memory, policy backends and the LLM client."""
