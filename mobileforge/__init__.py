"""MobileForge: annotation-free adaptation of mobile GUI agents, as a Dagster asset graph."""

__version__ = "0.1.0"
