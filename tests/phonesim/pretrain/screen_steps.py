"""Steps on a pretraining app's screens by what they show, shared by the app kinds' test modules."""

from __future__ import annotations

from phonesim import Phone
from phonesim.actions import Action
from phonesim.pretrain import load_pretrain_apps


def family(template_id: str) -> str:
    return template_id.split(".", 1)[1]


def launched(app: str) -> Phone:
    """A world-seed-0 phone holding every pretraining app, `app` in front."""
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
    """One action on the element showing `text`; it must be accepted."""
    assert phone.step(Action(kind, element=element(phone, text, starts), text=typed)).ok, (kind, text)
