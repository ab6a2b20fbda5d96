"""Resources from environment variables: the policy's torch threads."""

from __future__ import annotations

import pytest

from pipelines.resources import resources_for


@pytest.mark.parametrize(("value", "threads"), [(None, 1), ("0", None), ("4", 4)])
def test_policy_threads_come_from_the_environment(monkeypatch, value, threads):
    if value is None:
        monkeypatch.delenv("MOBILEFORGE_POLICY_THREADS", raising=False)
    else:
        monkeypatch.setenv("MOBILEFORGE_POLICY_THREADS", value)
    assert resources_for("local")["policy"].torch_threads == threads


def test_a_bad_thread_count_names_the_variable(monkeypatch):
    monkeypatch.setenv("MOBILEFORGE_POLICY_THREADS", "two")
    with pytest.raises(ValueError, match="MOBILEFORGE_POLICY_THREADS='two': expected a thread count"):
        resources_for("local")
