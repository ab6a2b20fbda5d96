"""Embedded phone simulator: JSON state, declarative apps, deterministic judges. No Dagster/torch."""
