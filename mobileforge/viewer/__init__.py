"""`mobileforge view`: a read-only web viewer of what the agent did, over a storage root (local or
s3://): tasks and attempts, episodes step by step with the actions drawn on their screenshots, the
benchmark's base against each adapted policy, and GRSD's fork pairs."""
