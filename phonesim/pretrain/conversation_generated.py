"""Generated conversations apps: many `ConvoSpec`s with invented words and drawn layouts, as
`phonesim.pretrain.generated` makes collection apps, so that what the base takes from this kind is its
layouts (threads with unread badges, bubbles, compose and send, the recipient picker, people with
long-press menus, handles, toasts), not its words. People's names, topics, group values, app labels and
half the nouns are invented words (never one another generated app uses); the lines are ordinary phrases
around invented words; the labels of handles, groups and buttons come from small pools of ordinary words,
as real apps' do. Everything is determined by `CONVO_SEED`.
"""

from __future__ import annotations

import random
from collections.abc import Collection

from phonesim.pretrain.collection import Attribute
from phonesim.pretrain.conversations import (BADGES, COMPOSE_STYLES, HANDLES, PEOPLE_STYLES, PERSON_STYLES,
                                             PICKER_STYLES, SUB_LINES, THREADS, ConvoSpec)
from phonesim.pretrain.generated import COLORS, GLYPHS, _Words, draw_specs, invented_app

CONVO_SEED = 3838
PEOPLE, TOPICS = 20, 14
NOUNS = ("chat", "thread", "talk", "channel", "room")
PERSONS = ("pal", "friend", "member", "mate", "peer", "buddy", "neighbour", "player")
LINES = ("The {w} is ready", "Saw the {w} today", "Left the {w} at home", "Your {w} arrived",
         "Meet me by the {w}", "The {w} looks great", "Still waiting on the {w}", "Try the {w} first",
         "Got two {w} tickets", "No {w} until Friday", "Fixed the {w} for you", "Back from {w} soon",
         "The {w} was closed", "Loved the {w} photos", "Bring your {w} along", "Running late, {w} traffic")
MENTIONS = ("Did the {topic} come back?", "Bring the {topic} along", "Who took my {topic}",
            "Found the {topic} at last", "Is the {topic} still free", "We need the {topic} again")
REPLIES = ("Bringing the {w} now", "Keep the {w} for me", "Saving a {w} for you", "Back soon with the {w}",
           "Sending the {w} tonight", "Sure, the {w} works", "No rush on the {w}", "See you at the {w}")
HANDLE_LABELS = ("Handle", "Tag", "Alias", "ID", "User name")
GROUP_LABELS = ("Circle", "Crew", "Team", "Club", "Squad", "Band", "Guild")
ME_WORDS = ("You", "Me", "I")
COMPOSE_LABELS = ("Reply", "Write", "Your line", "Say")
SEND_WORDS = ("Send", "Post", "Go", "Drop")
MESSAGE_WORDS = ("Message", "Chat", "Write", "Talk")
READ_WORDS = ("Mark as read", "Mark read", "Seen", "Read all")
DELETE_WORDS = ("Delete", "Remove", "Discard")
STARS = (("Star", "Starred"), ("Pin", "Pinned"), ("Heart", "Hearted"), ("Boost", "Boosted"))
BLOCKS = (("Block", "Blocked"), ("Mute", "Muted"), ("Silence", "Silenced"), ("Ban", "Banned"))
SENT_TOASTS = ("Sent", "Delivered", "On its way", "Posted")


def _spec(i: int, rng: random.Random, words: _Words) -> ConvoSpec:
    invented, label = invented_app(rng, words)
    noun = rng.choice(NOUNS) if rng.random() < 0.5 else invented
    person = rng.choice(PERSONS) if rng.random() < 0.5 else words.word(2)
    star, starred = rng.choice(STARS)
    block, blocked = rng.choice(BLOCKS)
    fill = [words.word() for _ in range(16)]
    return ConvoSpec(
        name=f"convo{i:02d}", label=label, package=f"org.pretrain.convo{i:02d}", color=rng.choice(COLORS),
        glyph=rng.choice(GLYPHS), noun=noun, plural=noun + "s", person=person, people=person + "s",
        titles=tuple(f"{words.word().capitalize()} {words.word().capitalize()}" for _ in range(PEOPLE)),
        new_titles=tuple(r.format(w=w) for r, w in zip(rng.sample(REPLIES, 6), fill[:6])),
        lines=tuple(f.format(w=w) for f, w in zip(rng.sample(LINES, 10), fill[6:])),
        mentions=tuple(rng.sample(MENTIONS, 3)), topics=tuple(words.word() for _ in range(max(TOPICS, THREADS))),
        group=Attribute("group", rng.choice(GROUP_LABELS), values=tuple(words.word().capitalize() for _ in range(5))),
        handle_label=rng.choice(HANDLE_LABELS), handle_style=rng.choice(sorted(HANDLES)), me_word=rng.choice(ME_WORDS),
        compose_label=rng.choice(COMPOSE_LABELS), send_word=rng.choice(SEND_WORDS),
        message_word=rng.choice(MESSAGE_WORDS), read_word=rng.choice(READ_WORDS), delete_word=rng.choice(DELETE_WORDS),
        star_word=star, starred_word=starred, block_word=block, blocked_word=blocked,
        sent_toast=rng.choice(SENT_TOASTS), people_at=rng.choice(PEOPLE_STYLES), compose=rng.choice(COMPOSE_STYLES),
        picker=rng.choice(PICKER_STYLES), person_actions=rng.choice(PERSON_STYLES), sub_line=rng.choice(SUB_LINES),
        badge=rng.choice(BADGES))


def generated_convo_specs(n: int, taken: Collection[str] = ()) -> tuple[ConvoSpec, ...]:
    """`n` generated conversations apps (the same ones for the same `n` and `taken`), none of whose invented
    words is in `taken` (lower case: the words other apps use)."""
    return draw_specs(CONVO_SEED, n, taken, _spec)
