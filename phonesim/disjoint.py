"""What the pretraining world must never show: the target apps' names, content and task instances.

`target_strings` collects every text the target world holds: the target apps' names, labels and
packages, every string of their worlds and initial states, and every target task instance's
instruction, parameters and gold answer over a range of seeds (the parameters a template draws
come from its app's world or from its own lists, so a range of seeds shows those lists).
`target_entities` keeps the ones that name something — a contact, a title, a date — rather than
a single generic word, and the target apps' names: the strings a pretraining sample must not contain (`training.base.world_recipe`
redraws any that does; `tests/phonesim/test_disjoint.py` checks the pretraining world itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from phonesim.apps import load_apps
from phonesim.phone import Phone
from phonesim.tasks import all_templates, instantiate

WORLD_SEEDS = (0, 1, 2)


def _leaves(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _leaves(k, out)
            _leaves(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out)


@lru_cache(maxsize=4)
def target_strings(instance_seeds: int = 20) -> frozenset[str]:
    """Every string of the target world (see the module docstring); instances at seeds 0..n-1."""
    out: set[str] = set()
    for app in load_apps().values():
        out |= {app.name, app.label, app.package}
    for seed in WORLD_SEEDS:
        phone = Phone(seed)
        for name in phone.apps:
            _leaves(phone.world(name), out)
        _leaves(phone.state["data"], out)
    for template_id in all_templates():
        for seed in range(instance_seeds):
            task = instantiate(template_id, seed)
            out.add(task.instruction)
            _leaves(task.params, out)
            if task.answer_spec is not None and isinstance(task.answer_spec.gold, str):
                out.add(task.answer_spec.gold)
    return frozenset(s.strip() for s in out if s.strip())


def is_entity(text: str) -> bool:
    """Whether a target string names something: several words, one with a capital or a digit
    ("Omar Garcia", "Pay electricity bill", "+1 859-555-5704", "Saturday, March 16, 2024"). Single
    words ("Work", "Travel", "Fatima") are ordinary vocabulary any world uses, not a target's content."""
    words = text.split()
    return len(words) > 1 and len(text) >= 5 and any(w[:1].isupper() or any(c.isdigit() for c in w) for w in words)


@lru_cache(maxsize=1)
def os_chrome() -> frozenset[str]:
    """What the phone itself shows whatever its apps, in every world: the status bar, the home
    screen's clock and date, the navigation buttons (texts, second lines and descriptions of an
    app-less phone's home screen, each alone and as one element's text)."""
    out = set()
    for seed in WORLD_SEEDS:
        for node in (n for top in Phone(seed, catalog={}).frame().nodes for n in top.walk()):
            parts = [" ".join(v.split()) for v in (node.text, node.sub, node.desc) if v.strip()]
            out |= set(parts) | ({f"{parts[0]} {parts[1]}"} if node.sub.strip() and node.text.strip() else set())
    return frozenset(out)


@lru_cache(maxsize=4)
def target_entities(instance_seeds: int = 20) -> frozenset[str]:
    """The target strings that name something (`is_entity`), plus the target apps' names and labels;
    not the phone's own chrome (`os_chrome`: the home screen's date is the same on every phone)."""
    entities = {s for s in target_strings(instance_seeds) if is_entity(s)} - os_chrome()
    return frozenset(entities | {x for app in load_apps().values() for x in (app.name, app.label)})


class TargetMatcher:
    """Finds target entities inside a text, as whole words, ignoring case."""

    def __init__(self, entities: Iterable[str]):
        names = {e.lower() for e in entities}
        self._pattern = re.compile(r"(?<!\w)(?:" + _trie_pattern(names) + r")(?!\w)") if names else None

    def find(self, text: str) -> str | None:
        """The first target entity in `text` (the longest one starting there), or None."""
        if self._pattern is None:
            return None
        m = self._pattern.search(text.lower())
        return m.group(0) if m else None


def _trie_pattern(words: set[str]) -> str:
    """One alternation of `words` factored by common prefixes: a flat alternation of thousands of
    names makes `re` try each at every position (40 s over the pretraining world's instances, 0.3 s
    factored). Longer words are tried first, as in a longest-first alternation."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if "" in node else body

    return build(trie)
