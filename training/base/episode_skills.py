"""Episode-context skills for base-policy pretraining: reading the steps already done and the
critic's hints, on generic instructions (no task template, judge or solution is consulted).

In a rollout the tiny policy's prompt carries more than one screen's instruction: a "Done:" list
of the attempt's earlier steps and, from attempt 2 on, the critic's one-line hints
(`ops.prompts.element_context`). A base pretrained only on single-step samples never saw either,
so it ignores hints and never terminates (measured: 0 terminations in 546 curriculum attempts).
`with_episode_context` wraps a single-step `SampleFn` and turns part of its click samples into:

- ``done``: the last step done is the element the instruction names -> terminate with success;
- ``sequence``: "Tap A, then tap B" -> the first part not in the Done list, terminate when both are;
- ``hint``: a hint says which element to use on this screen -> that element (its row carries
  the hint mark, as in rollouts), whatever the instruction says (abstract, or naming another
  row); ``type_hint``: a hint says what to type into a (marked) field;
- ``stale_hint``: the hinted element is not on this screen -> the element the instruction names;
- ``action_hint``: a hint names a step without an element on this screen (`swiping up`, typing
  into the focused field, `answering '13:30'`, `finish the task`, `pressing back`) -> that step;

Hints come under long task sentences with names, numbers and quotes as often as under short
phrases (a base that saw only short ones followed a launcher hint under "Create a contact named
Sophia Davis with phone number +1 859-555-5704." in none of 3 tries, under short phrases in 88
of 88), and some hint lines are plans: the sentence for this screen among sentences for others.

and gives the remaining clicks a Done list of unrelated earlier steps, so that a history alone
never means "stop" (half of those under a longer task-like sentence that names the element,
"Find X, then tell me the ...": held-out attempts ended by a false "done" were 0.91 without
it, 0.43 and 0.29 in the two rebuilds with it). Hint lines are written by the programmatic
critic's own functions and Done lines by the rollout's, so the text matches what rollouts show.
"""

from __future__ import annotations

import random
from dataclasses import replace

from ops.actions import Action, ActionType
from ops.actions.formats import label_echo
from ops.agent.hint_marks import describe_step_action
from ops.agent.hint_marks import corrective_summary
from ops.rollout.engine import describe_action
from training.base.grounding_data import (
    FIRST_NAMES,
    LAST_NAMES,
    MONTHS,
    WORDS,
    GroundingSample,
    SampleFn,
    UIElement,
    clickable_rows,
    critic_view,
    free_text,
)

# Verbs of task-like instructions ("Turn on X"), beyond the grounding generators' "Tap X".
TASK_VERBS = ("Tap", "Open", "Select", "Turn on", "Turn off", "Switch on", "Enable", "Choose", "Find", "Go to")
SKILLS = {"done": 3, "sequence": 2, "hint": 3, "stale_hint": 1, "action_hint": 2}
NOUNS = ("item", "entry", "list", "folder", "time", "date", "amount", "title", "group", "name", "number", "note",
         "reminder", "file", "event", "message", "category", "label")
OTHER_SCREENS = ("launcher", "home", "detail", "list", "settings", "editor", "search", "menu")


def done_line(elements: tuple[UIElement, ...], index: int) -> str:
    """The Done line of a click on `index`: the row the policy echoed."""
    return label_echo.render_row(index, elements[index].label)


def other_steps(rng: random.Random, other: GroundingSample, avoid: set[str], n: int) -> list[str]:
    """`n` Done lines of earlier steps on another screen, none naming a label in `avoid`."""
    rows = [i for i in clickable_rows(other.elements) if other.elements[i].name not in avoid]
    lines = []
    for _ in range(n):
        if rows and rng.random() < 0.8:
            lines.append(done_line(other.elements, rng.choice(rows)))
        else:
            lines.append(describe_action(Action(ActionType.TYPE, text=rng.choice(WORDS))))
    return lines


def _stale_hint(rng: random.Random, other: GroundingSample, here: set[str]) -> str | None:
    """A critic hint about a step on `other`'s screen naming no element in `here` (None if
    `other` has fewer than two such elements)."""
    away = [i for i in clickable_rows(other.elements) if other.elements[i].name not in here and other.elements[i].named]
    if len(away) < 2:
        return None
    good, wrong = rng.sample(away, 2)
    elements = critic_view(other.elements)
    return corrective_summary(other.screen or rng.choice(OTHER_SCREENS),
                              describe_step_action(Action(ActionType.CLICK, element=good), elements),
                              describe_step_action(Action(ActionType.CLICK, element=wrong), elements))


def _task_phrase(rng: random.Random) -> str:
    """An abstract task that names no element of the screen (hints carry the element)."""
    a, b = rng.sample(WORDS, 2)
    return rng.choice((f"Change the {a} setting", f"Update my {a} for {b}", f"Set up {a} and {b}",
                       f"Make sure {a} is ready", f"Organise the {a} list"))


def _value(rng: random.Random) -> str:
    """A value a task sentence may carry: a number, time, date, phone number, email or amount."""
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randint(1, 90))
    if kind == 1:
        return f"{rng.randint(0, 23):02d}:{rng.choice(('00', '15', '30', '45', '05', '40'))}"
    if kind == 2:
        return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2020, 2026)}"
    if kind == 3:
        return f"+1 {rng.randint(200, 999)}-555-{rng.randint(1000, 9999)}"
    if kind == 4:
        return f"{rng.choice(FIRST_NAMES).lower()}.{rng.randint(1, 99)}@example.org"
    return f"${rng.randint(1, 300)}.{rng.randint(0, 99):02d}"


def _long_task(rng: random.Random) -> str:
    """A long task-like sentence with a name, a value and often a quoted title, naming no element
    on purpose (generic words, no template's wording): what real instructions look like."""
    person = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    title = " ".join(rng.sample(WORDS, rng.randint(1, 2))).capitalize()
    name = rng.choice((person, f'"{title}"', title))
    a, b = rng.sample(NOUNS, 2)
    value = _value(rng)
    return rng.choice((
        f"Create a {a} named {name} with {b} {value}.",
        f"Change the {a} of {name} to {value}.",
        f"What {a} does {name} have? Answer with a {b}.",
        f"Tell me the {a} of {name}, then delete it.",
        f"Move {name} to the {title} {a}.",
        f"Send {person} the {a} of my {b} {name}.",
        f"How many {a}s are in {name}? Answer with a number.",
        f"Set the {a} for {name} to {value}, then mark the {b} as done.",
        f"Add {name} to my {a}s, due {value}.",
        f"I removed {name} by mistake — bring it back.",
    ))


def _hint_task(rng: random.Random) -> str:
    """The instruction of a hint sample: the hint carries the step, so any task sentence will do."""
    return _long_task(rng) if rng.random() < 0.5 else _task_phrase(rng)


def _in_plan(rng: random.Random, hint: str, other: GroundingSample, here: set[str]) -> str:
    """`hint` as one sentence of a plan hint, among sentences about other screens (30%)."""
    if rng.random() >= 0.3:
        return hint
    sentences = [hint]
    for _ in range(rng.randint(1, 3)):
        if (stale := _stale_hint(rng, other, here)) is not None:
            sentences.insert(rng.randrange(len(sentences) + 1), stale)
    return " ".join(sentences)


def _element_free_step(rng: random.Random, screen: GroundingSample) -> Action:
    """A step a hint may name on `screen` that has no element: scroll, type into the focused
    field, answer, finish, back."""
    kind = rng.randrange(5)
    if kind == 1 and not any(e.editable for e in screen.elements):
        kind = 0  # typing without naming a field goes into the focused one: only where a field is
    if kind == 0:
        return Action(ActionType.SWIPE, direction=rng.choice(("up", "down")))
    if kind == 1:
        return Action(ActionType.TYPE, text=free_text(rng, [e.name for e in screen.elements if e.named]))
    if kind == 2:
        return Action(ActionType.ANSWER, text=rng.choice((_value(rng), free_text(rng, []))))
    if kind == 3:
        return Action(ActionType.TERMINATE, status="success")
    return Action(ActionType.SYSTEM_BUTTON, button="back")


def _task_sentence(rng: random.Random, name: str) -> str:
    """A longer, task-like instruction that names `name` among other words."""
    a, b = rng.sample(WORDS, 2)
    return rng.choice((f"Open {name} and check the {a} for {b}", f"Find {name}, then tell me the {a}",
                       f"In {name}, change the {a} to {b}", f"Go to {name} and delete the {a} entry",
                       f"Check {name}: how many {a} items are there? Answer with a number."))


def with_episode_context(sample_fn: SampleFn, share: float = 0.5) -> SampleFn:
    """`sample_fn` with `share` of its click samples turned into episode-context skills."""
    if not 0 <= share <= 1:
        raise ValueError(f"share must be within [0, 1], got {share}")

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        base = sample_fn(rng, render)
        if not render and base.kind == "type" and rng.random() < share * SKILLS["hint"] / sum(SKILLS.values()):
            # the critic's fix is to type something: the hint carries the text, the task does not
            screen = base.screen or rng.choice(OTHER_SCREENS)
            hint = corrective_summary(screen, describe_step_action(base.target, critic_view(base.elements)), "")
            return replace(base, instruction=_hint_task(rng), hints=(hint,), kind="type_hint", screen=screen)
        rows = clickable_rows(base.elements)
        if render or base.kind != "click" or len(rows) < 2:
            return base
        other = sample_fn(rng, False)  # a second screen: where earlier steps happened
        target = base.target.element
        name = base.elements[target].name
        if rng.random() >= share:  # a plain click after unrelated earlier steps
            done = other_steps(rng, other, {name}, rng.randrange(4))
            if done and rng.random() < 0.5:  # a task sentence naming the element: not done yet, act
                return replace(base, history=tuple(done), instruction=_task_sentence(rng, name))
            return replace(base, history=tuple(done))
        kind = rng.choices(list(SKILLS), list(SKILLS.values()))[0]
        verb = rng.choice(TASK_VERBS)
        # unrelated earlier steps name nothing of this screen, so they never read as "already done"
        earlier = other_steps(rng, other, {e.name for e in base.elements}, rng.randrange(3))
        if kind == "done":
            # the named element was tapped on the previous screen; this screen is where it led
            return GroundingSample(None, other.elements, f"{verb} {name}",
                                   Action(ActionType.TERMINATE, status="success"), "done",
                                   history=(*earlier, done_line(base.elements, target)))
        if kind == "sequence":
            first = rng.choice([i for i in rows if i != target])
            first_name = base.elements[first].name
            instruction = f"{verb} {first_name}, then {rng.choice(TASK_VERBS).lower()} {name}"
            stage = rng.randrange(3)
            if stage == 0:
                return GroundingSample(None, base.elements, instruction, Action(ActionType.CLICK, element=first),
                                       "sequence", history=tuple(earlier))
            history = (*earlier, done_line(base.elements, first))
            if stage == 1:
                return GroundingSample(None, base.elements, instruction, base.target, "sequence", history=history)
            return GroundingSample(None, other.elements, instruction, Action(ActionType.TERMINATE, status="success"),
                                   "sequence", history=(*history, done_line(base.elements, target)))
        if kind == "hint":
            if not base.elements[target].named:  # a row without text: a hint could not name it
                return replace(base, history=tuple(earlier))
            # the hint names this screen's target; the instruction is abstract or names another row
            # (an applicable hint wins); sometimes a stale hint about another screen comes along
            elements = critic_view(base.elements)
            wrong = rng.choice([i for i in rows if i != target])
            screen = base.screen or rng.choice(OTHER_SCREENS)
            hint = corrective_summary(screen, describe_step_action(base.target, elements),
                                      describe_step_action(Action(ActionType.CLICK, element=wrong), elements))
            instruction = _hint_task(rng) if rng.random() < 0.5 else f"{verb} {base.elements[wrong].name}"
            hints = [_in_plan(rng, hint, other, {e.name for e in base.elements})]
            stale = _stale_hint(rng, other, {e.name for e in base.elements})
            if stale is not None and rng.random() < 0.4:
                hints.insert(rng.randrange(2), stale)
            return GroundingSample(None, base.elements, instruction, base.target, "hint",
                                   hints=tuple(hints), history=tuple(earlier), screen=screen)
        if kind == "action_hint":
            step = _element_free_step(rng, base)
            screen = base.screen or rng.choice(OTHER_SCREENS)
            fix = "finish the task" if step.type == ActionType.TERMINATE else describe_step_action(step, [])
            hint = _in_plan(rng, corrective_summary(screen, fix, ""), other, {e.name for e in base.elements})
            instruction = _hint_task(rng) if rng.random() < 0.5 else f"{verb} {name}"
            return GroundingSample(None, base.elements, instruction, step, "action_hint", hints=(hint,),
                                   history=tuple(earlier), screen=screen)
        # stale hint: about an element of another screen; the instruction names one of this one
        hint = _stale_hint(rng, other, {e.name for e in base.elements})
        if hint is None:
            return replace(base, history=tuple(earlier))
        return GroundingSample(None, base.elements, f"{verb} {name}", base.target, "stale_hint",
                               hints=(hint,), history=tuple(earlier))

    sample.__qualname__ = f"with_episode_context({getattr(sample_fn, '__qualname__', 'sample_fn')}, share={share})"
    return sample
