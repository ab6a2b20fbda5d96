"""Near-duplicate removal for curriculum tasks, deterministic and order-preserving (keep the first).

Two tasks of the same app are near-duplicates when their normalised instructions (lowercased,
numbers and quoted values masked, filler words dropped) have a character-trigram Jaccard
similarity at or above a threshold; trigrams tolerate spelling variants ("favourites" /
"favorites") that word sets miss. Synonyms ("switch on" / "turn on") are beyond a lexical
measure and stay; the LLM is asked not to repeat tasks it was shown. Two verifiable tasks
with different judges (template + params, or goal screen) are never text duplicates, since
parameter variants are distinct tasks by construction; the same judge twice is an exact
duplicate whatever the wording.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ops.curriculum.model import CurriculumTask, canonical_params

DEFAULT_THRESHOLD = 0.8

_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|'[^']*'(?!\w)|‘[^’]*’")
_NUMBER = re.compile(r"[+-]?\d(?:[\d.,:/-]|\s(?=\d))*%?")  # "+1 859-555-5704" is one value
_WORD = re.compile(r"[a-z]+|<[qn]>")
FILLER = frozenset({"a", "an", "the", "please", "kindly", "just", "my", "this", "that", "me", "i", "you",
                    "your", "can", "could", "would", "will"})


def normalize_instruction(text: str) -> str:
    """Lowercased words with quoted values -> <q>, numbers -> <n>, filler words dropped."""
    text = _QUOTED.sub(" <q> ", text.lower())
    text = _NUMBER.sub(" <n> ", text)
    return " ".join(w for w in _WORD.findall(text) if w not in FILLER)


def trigrams(normalized: str) -> frozenset[str]:
    padded = f" {normalized} "
    return frozenset(padded[i:i + 3] for i in range(len(padded) - 2))


def similarity(a: str, b: str) -> float:
    """Character-trigram Jaccard similarity of two instructions after normalisation."""
    return _jaccard(trigrams(normalize_instruction(a)), trigrams(normalize_instruction(b)))


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


def judge_key(task: CurriculumTask) -> tuple[str, ...] | None:
    """What decides success of a verifiable task; None for tasks without a judge."""
    if task.template_id is not None:
        return ("template", task.template_id, canonical_params(task.template_params or {}))
    if task.goal_screen is not None:
        return ("screen", task.app, task.goal_screen)
    if task.goal_state is not None:
        return ("state", task.app, canonical_params(task.goal_state.values))
    return None


@dataclass(frozen=True)
class Duplicate:
    task: CurriculumTask
    kept_task_id: str  # the earlier task it duplicates
    reason: str  # "same_judge" | "similar_text"
    similarity: float


@dataclass(frozen=True)
class DedupResult:
    kept: list[CurriculumTask]
    dropped: list[Duplicate]


def deduplicate(tasks: Sequence[CurriculumTask], threshold: float = DEFAULT_THRESHOLD) -> DedupResult:
    """Keep the first of every group of duplicates (see module docstring). Put the tasks you
    prefer (e.g. verifiable ones) first."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"dedup threshold must be in (0, 1], got {threshold}")
    kept: list[CurriculumTask] = []
    dropped: list[Duplicate] = []
    judges: dict[tuple[str, ...], str] = {}
    ids: set[str] = set()
    per_app: dict[str, list[tuple[CurriculumTask, frozenset[str], tuple[str, ...] | None]]] = {}
    for task in tasks:
        if task.task_id in ids:
            raise ValueError(f"task id {task.task_id!r} appears twice")
        ids.add(task.task_id)
        key = judge_key(task)
        if key is not None and key in judges:
            dropped.append(Duplicate(task, judges[key], "same_judge", 1.0))
            continue
        grams = trigrams(normalize_instruction(task.instruction))
        match = _similar(grams, key, per_app.get(task.app, []), threshold)
        if match is not None:
            dropped.append(Duplicate(task, match[0].task_id, "similar_text", match[1]))
            continue
        kept.append(task)
        if key is not None:
            judges[key] = task.task_id
        per_app.setdefault(task.app, []).append((task, grams, key))
    return DedupResult(kept, dropped)


def _similar(grams: frozenset[str], key: tuple[str, ...] | None,
             earlier: list[tuple[CurriculumTask, frozenset[str], tuple[str, ...] | None]],
             threshold: float) -> tuple[CurriculumTask, float] | None:
    for other, other_grams, other_key in earlier:
        if key is not None and other_key is not None:
            continue  # different judges (equal ones were caught as same_judge)
        small, large = sorted((len(grams), len(other_grams)))
        if large and small / large < threshold:  # Jaccard <= |small| / |large|
            continue
        score = _jaccard(grams, other_grams)
        if score >= threshold:
            return other, score
    return None
