"""`ops.actions.excerpt`: error messages quote a short excerpt of any input, at bounded cost."""

from __future__ import annotations

import time

from ops.actions.excerpt import clipped, excerpt


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


class _BrokenRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_an_excerpt_is_short_whatever_the_value():
    for value in ("x" * 1_000_000, b"\x00" * 1_000_000, 10**5000, _nested(100_000), list(range(100_000)),
                  {str(i): i for i in range(10_000)}, _BrokenRepr(), "\ud800" * 10):
        start = time.process_time()
        text = excerpt(value)
        assert len(text) <= 81 and time.process_time() - start < 0.25, (type(value).__name__, text)


def test_an_excerpt_reads_like_the_value():
    assert excerpt("Wi-Fi") == "'Wi-Fi'" and excerpt([1, 2]) == "[1, 2]" and excerpt(None) == "None"
    assert excerpt("x" * 200).startswith("'xxx") and excerpt("x" * 200).endswith("…")
    assert excerpt(10**5000) == "<int of about 5001 digits>"  # 10**5000 has 5,001 digits
    assert excerpt("\ud800") == "'\\ud800'"  # escaped: the message stays encodable


def test_a_clipped_message_says_how_much_was_left_out():
    assert clipped("short") == "short"
    assert clipped("y" * 1000, 10) == "y" * 10 + "… (990 more characters)"
