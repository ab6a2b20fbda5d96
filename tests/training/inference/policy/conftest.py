"""Fixtures for the policy backend tests: network guard and a tiny checkpoint (tests/support/fixtures.py)."""

from tests.support.fixtures import no_external_network, tiny_checkpoint  # noqa: F401  (fixtures)
