"""The hand-written conversations apps (`phonesim.pretrain.conversations`): a climbing crew's chats, and
a street's neighbours' threads. Their names, people, lines and words are the pretraining world's own
(`tests/phonesim/test_disjoint.py` checks them against the target world); their layouts differ on every
knob, so neither is the only arrangement of the kind the base sees.
"""

from __future__ import annotations

from phonesim.pretrain.collection import Attribute
from phonesim.pretrain.conversations import ConvoSpec

CONVO_SPECS = (
    ConvoSpec(
        name="ropeline", label="Ropeline", package="org.pretrain.ropeline", color="#ef6c00", glyph="group",
        noun="chat", plural="chats", person="pal", people="pals",
        titles=("Brisa Quell", "Tamsin Oduya", "Ferro Lindqvist", "Maelle Dorn", "Ottilie Brask", "Caspian Vey",
                "Idris Fenwick", "Junia Marlow", "Kestrel Amadi", "Lorcan Pyle", "Mirela Stoyan", "Nuno Carvalhal",
                "Odessa Thorne", "Perrin Achebe", "Quilla Rendt", "Rasmus Okoye", "Saoirse Vail", "Tobiah Grint",
                "Ulrike Sand", "Wendell Ambrose"),
        new_titles=("Count me in for the crag", "Be at the hut in ten", "Grabbing chalk first", "Top rope is mine",
                    "Wait for me by the boulders", "Bringing the spare shoes"),
        lines=("Chalk bag is in my locker", "The north wall is wet again", "Leaving the hut at dawn",
               "My fingers still ache", "Saved you a spot by the stove", "Kettle is on", "That overhang was brutal",
               "Found your glove in the van", "Forecast looks dry for the slabs", "Skipping the warm-up today",
               "Parked by the old quarry", "New holds went up on the blue wall"),
        mentions=("Did you pack the {topic}?", "Remember the {topic} for the weekend", "The {topic} is in the boot",
                  "Who still has my {topic}"),
        topics=("headlamp", "crash pad", "quickdraws", "belay plate", "guidebook", "thermos", "tarp", "rope bag",
                "harness", "hangboard", "trail mix", "helmet", "carabiners", "finger tape"),
        group=Attribute("crew", "Crew", values=("Boulderers", "Sport", "Trad", "Alpine", "Indoor")),
        handle_label="Handle", handle_style="at", me_word="You", compose_label="Reply", send_word="Send",
        message_word="Chat", read_word="Mark as read", delete_word="Delete", star_word="Star",
        starred_word="Starred", block_word="Block", blocked_word="Blocked", sent_toast="Sent",
        people_at="tab", compose="top", picker="all", person_actions="bar", sub_line="handle", badge="count"),
    # --- held out of pretraining: its templates measure transfer to a conversations app never trained on ----
    ConvoSpec(
        name="porchlight", label="Porchlight", package="org.pretrain.porchlight", color="#283593", glyph="location",
        noun="thread", plural="threads", person="neighbour", people="neighbours",
        titles=("Agathe Rimmer", "Bartholo Kaine", "Cosima Vrede", "Dashiell Orme", "Eulalie Fisk", "Fintan Moyo",
                "Gisela Harrow", "Hollis Tembo", "Ines Waverly", "Jarrah Bellamy", "Konstanz Ruiz", "Linnea Oakes",
                "Marius Delacroix", "Noor Ashdown", "Oriel Banda", "Prosper Lyle", "Rosalind Ekwueme", "Silas Pennant",
                "Thea Marchetti", "Vivian Okonjo"),
        new_titles=("On it right after lunch", "Leave it on my step", "Fine by the whole row", "I can help on Sunday",
                    "Just got back from the market", "Will check the drain tonight"),
        lines=("Bins go out tonight", "Hedge trimming starts at nine", "Parcel left by your door",
               "Street lamps are fixed at last", "Meeting moved to the church hall", "Your cat is back home",
               "Water is off until noon", "Leaves piling up by the drain", "Spare keys are with me",
               "Bake sale raised plenty", "Van blocking the lane again", "Foxes got into the compost"),
        mentions=("Who has the {topic} now", "The {topic} needs fixing", "Left the {topic} by the shed",
                  "Can I borrow the {topic} tomorrow"),
        topics=("wheelbarrow", "hedge cutter", "leaf blower", "paddling pool", "step stool", "pressure washer",
                "cool box", "gazebo", "bike pump", "sandbags", "noticeboard", "bunting", "lawnmower", "rain barrel"),
        group=Attribute("circle", "Circle", values=("Orchard", "Harbourside", "Millrace", "Bakehouse", "Chapelgate")),
        handle_label="Key tag", handle_style="code", me_word="Me", compose_label="Write", send_word="Post",
        message_word="Write", read_word="Seen", delete_word="Remove", star_word="Pin", starred_word="Pinned",
        block_word="Mute", blocked_word="Muted", sent_toast="Posted",
        people_at="icon", compose="bottom", picker="suggest", person_actions="buttons", sub_line="group", badge="new"),
)

CONVO_HELD_OUT = ("porchlight",)  # never pretrained on: its tasks measure transfer to an unseen conversations app
