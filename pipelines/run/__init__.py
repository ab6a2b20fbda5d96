"""`mobileforge run` as code: an experiment's stages launched through the code location, forks, reuse,
config checks and the sweep of abandoned runs."""
