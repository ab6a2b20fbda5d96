"""Typed answer matching (MobileGym §4.2 and appendix F, the AnswerSheet protocol).

A query task declares one typed field; the agent's `answer` text is parsed into that type
and compared with a type-specific matcher. Equivalent formats pass ("34 °C", "34 degrees",
"thirty-four" for number 34); hedged or multi-valued answers ("33 or 34") fail because they
parse to more than one value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

KINDS = ("number", "text", "choice", "date", "time", "phone")

_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_HEDGES = re.compile(r"\b(or|maybe|perhaps|probably|either|between|around|approximately|about|roughly|possibly)\b|\?")
_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9


@dataclass(frozen=True)
class AnswerSpec:
    """One typed answer field: `gold` is a number, text, choice, ISO date or HH:MM time."""

    kind: str
    gold: str | float
    tolerance: float = 0.0  # number: absolute tolerance
    choices: tuple[str, ...] = ()
    hint: str = ""  # format hint shown in the instruction, e.g. "a number"

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"answer kind {self.kind!r} not in {KINDS}")
        if self.kind == "choice" and self.gold not in self.choices:
            raise ValueError(f"choice gold {self.gold!r} not among {self.choices}")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "gold": self.gold, "tolerance": self.tolerance, "choices": list(self.choices),
                "hint": self.hint}


def normalize_text(s: str) -> str:
    s = s.casefold().strip()
    s = re.sub(r"^(the answer is|answer:|it is|it's)\s*", "", s)
    s = re.sub(r"[^\w\s@+.-]", " ", s)
    return re.sub(r"\s+", " ", s).strip(" .")


def parse_numbers(s: str) -> list[float]:
    """Every numeric value in `s` (digits with separators, or English number words)."""
    values = [float(m.replace(",", "")) for m in re.findall(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+", s)]
    words = re.findall(r"[a-z]+", s.casefold().replace("-", " "))
    i = 0
    while i < len(words):
        w = words[i]
        if w in _TENS:
            v = _TENS[w]
            if i + 1 < len(words) and words[i + 1] in _WORDS and _WORDS[words[i + 1]] < 10:
                v += _WORDS[words[i + 1]]
                i += 1
            values.append(float(v))
        elif w in _WORDS:
            values.append(float(_WORDS[w]))
        i += 1
    return values


def parse_dates(s: str) -> set[date]:
    out: set[date] = set()
    t = s.casefold()
    for y, m, d in re.findall(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b", t):
        out |= _mk(int(y), int(m), int(d))
    for m, d, y in re.findall(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b", t):  # US order
        out |= _mk(int(y), int(m), int(d))
    for mon, d, y in re.findall(r"\b([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", t):
        if mon in _MONTHS:
            out |= _mk(int(y), _MONTHS[mon], int(d))
    for d, mon, y in re.findall(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]{3,9})\.?,?\s+(\d{4})\b", t):
        if mon in _MONTHS:
            out |= _mk(int(y), _MONTHS[mon], int(d))
    return out


def _mk(y: int, m: int, d: int) -> set[date]:
    try:
        return {date(y, m, d)}
    except ValueError:
        return set()


def parse_times(s: str) -> set[int]:
    """Minutes after midnight for each time in `s` ("14:30", "2:30 pm", "2 pm", "noon")."""
    out: set[int] = set()
    t = s.casefold()
    for h, mnt, ap in re.findall(r"\b(\d{1,2})(?:[:.h](\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?(?![\d])", t):
        if not mnt and not ap:
            continue
        hh, mm = int(h), int(mnt or 0)
        if ap:
            if not 1 <= hh <= 12:
                continue
            hh = hh % 12 + (12 if ap.startswith("p") else 0)
        if hh < 24 and mm < 60:
            out.add(hh * 60 + mm)
    if "noon" in t:
        out.add(12 * 60)
    if "midnight" in t:
        out.add(0)
    return out


def match_answer(spec: AnswerSpec, answer: str | None) -> tuple[bool, str]:
    """(passed, reason) for the agent's answer text against a typed field."""
    if answer is None or not answer.strip():
        return False, "no answer submitted"
    k = spec.kind
    if k == "number":
        values = set(parse_numbers(answer))
        if len(values) != 1:
            return False, f"expected one number, found {sorted(values) or 'none'}"
        v = values.pop()
        ok = abs(v - float(spec.gold)) <= spec.tolerance + 1e-9
        return ok, "" if ok else f"{v:g} != {float(spec.gold):g}"
    if _HEDGES.search(answer.casefold()) and k in ("text", "choice", "phone"):
        return False, "hedged answer"
    if k == "text":
        ok = normalize_text(answer) == normalize_text(str(spec.gold))
        return ok, "" if ok else f"{answer!r} != {spec.gold!r}"
    if k == "phone":
        digits = re.sub(r"\D", "", answer)
        gold = re.sub(r"\D", "", str(spec.gold))
        ok = len(digits) >= 7 and (digits == gold or gold.endswith(digits) and len(gold) - len(digits) <= 2
                                   or digits.endswith(gold) and len(digits) - len(gold) <= 2)
        return ok, "" if ok else f"phone {digits} != {gold}"
    if k == "choice":
        norm = normalize_text(answer)
        hits = [c for c in spec.choices if normalize_text(c) == norm]
        if not hits:
            hits = [c for c in spec.choices if re.search(rf"\b{re.escape(normalize_text(c))}\b", norm)]
        if len(hits) != 1:
            return False, f"answer matches {len(hits)} choices"
        ok = hits[0] == spec.gold
        return ok, "" if ok else f"{hits[0]!r} != {spec.gold!r}"
    if k == "date":
        dates = parse_dates(answer)
        if len(dates) != 1:
            return False, f"expected one date, found {len(dates)}"
        ok = dates.pop().isoformat() == spec.gold
        return ok, "" if ok else "wrong date"
    times = parse_times(answer)
    if len(times) != 1:
        return False, f"expected one time, found {len(times)}"
    hh, mm = map(int, str(spec.gold).split(":"))
    ok = times.pop() == hh * 60 + mm
    return ok, "" if ok else "wrong time"
