"""Playing a pretraining app's screens by what they show, for the tests of each app kind
(tests/phonesim/pretrain/test_*_apps.py): launch an app, find an element by its text, act on it."""

from __future__ import annotations

from phonesim import Phone
from phonesim.actions import Action
from phonesim.pretrain import load_pretrain_apps


def family_of(template_id: str) -> str:
    return template_id.split(".", 1)[1]


def launched(app: str) -> Phone:
    """A phone of world seed 0 holding every pretraining app, with `app` open."""
    phone = Phone(0, catalog=load_pretrain_apps())
    phone.launch(app)
    return phone


def element(phone: Phone, text: str, starts: bool = False) -> int:
    """The element whose text (or description) is `text` (or starts with it)."""
    for e in phone.observe().elements:
        for value in (e["text"], e["desc"]):
            if value == text or (starts and value.startswith(text)):
                return e["index"]
    raise AssertionError(f"no element {text!r} on {[e['text'] or e['desc'] for e in phone.observe().elements]}")


def act(phone: Phone, kind: str, text: str, typed: str | None = None, starts: bool = False) -> None:
    """Do `kind` (click, long_press, type `typed`) on the element `element` finds; it must succeed."""
    action = Action(kind, element=element(phone, text, starts), text=typed)
    assert phone.step(action).ok, (kind, text)


def texts(phone: Phone) -> list[str]:
    return [e["text"] for e in phone.observe().elements]
