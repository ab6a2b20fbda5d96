"""Shared test helpers (local servers, fixtures) for MobileForge tests."""
