"""The training methods, one folder each: config, trainer and the method's own rules side by side."""
