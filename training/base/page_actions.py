"""Page-action skill for base pretraining: "<Button> <entry>" on simulator pages (no task involved).

Most app functions are "open an entry, press a button on its page" (a contact's Call, a
recording's Delete, then the dialog's Delete). The grounding and episode skills teach "tap the
row the instruction names" and "stop once the named row was tapped", so a base that has
opened the entry the instruction names taps the entry's title on its page again (greedy traces
of the bundled base started in the right app: `recorder.delete` and `contacts.delete` re-tap the
title until the loop detector ends the attempt).
Here random walks open an entry's page (a tap on a content row that leads to another screen),
press one of the page's buttons and, when the next screen repeats the button's first word (a
confirmation dialog), press that too. The samples walk that chain with the instruction naming
the button and the entry ("Delete Bird song", "Open Ana Chen and tap Call") and the "Done:"
list carrying the steps already taken:

- on the list: tap the entry;
- on the entry's page, the entry tapped: tap the button (not the entry's title);
- on the confirmation, entry and button tapped: tap the confirming row;
- after the last press: terminate with success.

Buttons are drawn at random from what the pages show; no task template, judge or solution is
consulted. Off in the bundled base (`--page-share 0`): a rebuild with it learned the skill but
declared success far more often on held-out tasks (README, "A base with page actions").
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ops.actions import Action, ActionType
from phonesim.apps import load_apps
from phonesim.phone import Phone
from training.base.episode_skills import done_line, other_steps
from training.base.grounding_data import WORDS, GroundingSample, SampleFn
from training.base.sim_grounding import SimScreen, random_taps, sim_screen

# rows every screen carries or that only move around; never the button of a page action
NAVIGATION = frozenset({"Back", "Home", "Overview", "Navigate up", "More options"})
SYSTEM_APPS = frozenset({"launcher", "recents"})
STAGES = ("entry", "button", "after", "finish")


@dataclass(frozen=True, slots=True)
class PageVisit:
    """An entry opened from a list, a button pressed on its page, and what followed."""

    listing: SimScreen
    row: int  # the entry's index on `listing`
    page: SimScreen  # the entry's page
    button: int  # the pressed button's index on `page`
    after: SimScreen  # the screen the press led to
    confirm: int | None  # index on `after` of the row confirming the press, if it asks
    final: SimScreen  # the screen after the confirmation (`after` when there was none)


def _entries(screen: SimScreen) -> list[int]:
    return [i for i, e in enumerate(screen.elements)
            if e.clickable and e.text and not e.editable and "[" not in e.label and e.text not in NAVIGATION]


def _buttons(screen: SimScreen, entry: str) -> list[int]:
    """One-line rows (a list entry shows more than its name) other than the entry's title."""
    return [i for i in _entries(screen) if screen.elements[i].label == screen.elements[i].text != entry]


def _confirming(screen: SimScreen, button: str) -> int | None:
    """The row of a confirmation dialog (it offers Cancel) that repeats the button's first word."""
    texts = [e.text for e in screen.elements if e.clickable]
    if "Cancel" not in texts:
        return None
    first = button.split()[0]
    return next((i for i, e in enumerate(screen.elements)
                 if e.clickable and e.text != "Cancel" and e.text.split()[:1] == [first]), None)


def collect_visits(n_visits: int, seed: int, max_walk: int = 2) -> list[PageVisit]:
    """`n_visits` page visits from short random walks in every app (walks that open no new
    screen or find no button are skipped)."""
    rng = random.Random(seed)
    apps = sorted(load_apps())
    visits: list[PageVisit] = []
    while len(visits) < n_visits:
        phone = Phone(world_seed=rng.randrange(3))
        phone.launch(rng.choice(apps))
        random_taps(rng, phone, rng.randrange(max_walk + 1))
        app = phone.current_app
        listing = sim_screen(phone.observe())
        rows = _entries(listing)
        if app in SYSTEM_APPS or not rows:
            continue
        row = rng.choice(rows)
        phone.step(Action(ActionType.CLICK, element=row))
        if phone.current_app != app or phone.current_screen == listing.name:  # no page of this app opened
            continue
        page = sim_screen(phone.observe())
        buttons = _buttons(page, listing.elements[row].text)
        if not buttons:
            continue
        button = rng.choice(buttons)
        phone.step(Action(ActionType.CLICK, element=button))
        after = sim_screen(phone.observe())
        confirm = _confirming(after, page.elements[button].text)
        final = after
        if confirm is not None:
            phone.step(Action(ActionType.CLICK, element=confirm))
            final = sim_screen(phone.observe())
        visits.append(PageVisit(listing, row, page, button, after, confirm, final))
    return visits


def _instruction(rng: random.Random, button: str, name: str) -> str:
    word = rng.choice(WORDS).lower()
    return rng.choice((f"{button} {name}", f'{button} "{name}"', f"Open {name} and tap {button}",
                       f'{button} the {word} "{name}".', f"{name}: {button.lower()}"))


def page_action_sample(rng: random.Random, visit: PageVisit, earlier: tuple[str, ...]) -> GroundingSample:
    """One stage of `visit` as a sample; `earlier` are unrelated Done lines that came before."""
    name = visit.listing.elements[visit.row].text
    button = visit.page.elements[visit.button].text
    instruction = _instruction(rng, button, name)
    opened = (*earlier, done_line(visit.listing.elements, visit.row))
    pressed = (*opened, done_line(visit.page.elements, visit.button))
    stage = rng.choice(STAGES if visit.confirm is not None else tuple(s for s in STAGES if s != "after"))
    if stage == "entry":
        return GroundingSample(None, visit.listing.elements, instruction, Action(ActionType.CLICK, element=visit.row),
                               "page_action", history=earlier, screen=visit.listing.name)
    if stage == "button":
        # half the time another of the page's buttons was pressed last (and left the page as it
        # was): a Done list that ends in a button which is not the instruction's is no reason to stop
        others = [i for i in _buttons(visit.page, name) if visit.page.elements[i].text != button]
        if others and rng.random() < 0.5:
            opened = (*opened, done_line(visit.page.elements, rng.choice(others)))
        return GroundingSample(None, visit.page.elements, instruction, Action(ActionType.CLICK, element=visit.button),
                               "page_action", history=opened, screen=visit.page.name)
    if stage == "after":  # a confirmation: press its row
        return GroundingSample(None, visit.after.elements, instruction,
                               Action(ActionType.CLICK, element=visit.confirm), "page_action", history=pressed,
                               screen=visit.after.name)
    done = pressed if visit.confirm is None else (*pressed, done_line(visit.after.elements, visit.confirm))
    return GroundingSample(None, visit.final.elements, instruction, Action(ActionType.TERMINATE, status="success"),
                           "page_action_done", history=done, screen=visit.final.name)


def with_page_actions(sample_fn: SampleFn, share: float, n_visits: int = 400, seed: int = 0) -> SampleFn:
    """`sample_fn` with `share` of its text-only samples replaced by page-action samples
    (`sample_fn` itself when `share` is 0)."""
    if not 0 <= share <= 1:
        raise ValueError(f"share must be within [0, 1], got {share}")
    if share == 0:
        return sample_fn
    visits = collect_visits(n_visits, seed)

    def sample(rng: random.Random, render: bool) -> GroundingSample:
        if render or rng.random() >= share:
            return sample_fn(rng, render)
        visit = rng.choice(visits)
        other = sample_fn(rng, False)
        avoid = {e.name for screen in (visit.listing, visit.page) for e in screen.elements}
        return page_action_sample(rng, visit, tuple(other_steps(rng, other, avoid, rng.randrange(4))))

    sample.__qualname__ = (f"with_page_actions({getattr(sample_fn, '__qualname__', 'sample_fn')}, share={share}, "
                           f"n_visits={n_visits}, seed={seed})")
    return sample
