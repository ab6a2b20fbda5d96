"""The hand-written folders apps (`phonesim.pretrain.folders`): a naturalist's field journal (sketches
and recorded calls in folders of species) and a musician's practice binders (charts and taped takes).
Their names, folders, items and words are the pretraining world's own (`tests/phonesim/test_disjoint.py`
checks them against the target world); their layouts differ on every knob, so neither is the only
arrangement of the kind the base sees.
"""

from __future__ import annotations

from phonesim.pretrain.folders import FolderSpec

FOLDER_SPECS = (
    FolderSpec(
        name="fieldbook", label="Fieldbook", package="org.pretrain.fieldbook", color="#33691e", glyph="location",
        noun="entry", plural="entries",
        folders=("Birds", "Birds/Waders", "Mosses", "Beetles", "Ferns", "Ferns/Spores"),
        titles=("Heron at dawn", "Curlew call", "Lichen crust", "Stag beetle", "Sphagnum bed", "Redshank trill",
                "Bracken patch", "Ground beetle", "Oystercatcher pair", "Hart's tongue", "Feather moss",
                "Dunlin flock", "Tiger beetle", "Royal fern", "Snipe drumming", "Cushion moss", "Lapwing cry",
                "Ladder fern"),
        new_titles=("Sandpiper wade", "Dor beetle", "Haircap moss", "Maidenhair clump", "Godwit probe",
                    "Whimbrel note"),
        new_folders=("Lichens", "Mayflies", "Owls", "Sedges"),
        bodies=("Seen by the reed bed at low tide.", "Three of them under the fallen oak.",
                "Damp bank, north side of the weir.", "Heard twice before the rain came in.",
                "Green sheen on the wing cases.", "Fronds still curled at the tips."),
        new_bodies=("Two by the old sluice gate.", "Bright orange spores today.", "Feeding along the mudflat edge.",
                    "Under loose bark near the stile."),
        text_kind="Sketch", media_kind="Call", folder_word="Folder", star_word="Star", starred_word="Starred",
        bin_word="Bin", date_label="Logged", title_label="Title", body_label="Field text",
        nav="crumbs", detail="bar", bin_place="icon"),
    # --- held out of pretraining: its templates measure transfer to a folders app never trained on ----
    FolderSpec(
        name="tapeshelf", label="Tapeshelf", package="org.pretrain.tapeshelf", color="#4527a0", glyph="sound",
        noun="take", plural="takes",
        folders=("Scales", "Scales/Minor", "Etudes", "Duets", "Warmups", "Warmups/Breath"),
        titles=("Lydian run", "Hanon seven", "Minuet in G", "Long tones", "Lip slurs", "Czerny study",
                "Arpeggio ladder", "Blues shuffle", "Octave jumps", "Trill drill", "Scherzo bars", "Waltz duet",
                "Chromatic climb", "Breath count", "Tongue ladder", "Rondo page", "Bebop lick", "Pedal tones"),
        new_titles=("Dorian run", "Fugue subject", "Staccato set", "Canon duet", "Harmonic scan", "Ragtime bars"),
        new_folders=("Sight reading", "Solos", "Chorales", "Drones"),
        bodies=("Keep the metronome at sixty.", "Left hand leads the second bar.", "Slow on the way down.",
                "Breathe before the last phrase.", "Accent every third beat.", "Watch the thumb crossing."),
        new_bodies=("Start at eighty, then ninety.", "Relax the jaw on the high run.", "Swap parts after the repeat.",
                    "Count four before each entry."),
        text_kind="Chart", media_kind="Tape", folder_word="Binder", star_word="Pin", starred_word="Pinned",
        bin_word="Basket", date_label="Taped", title_label="Name", body_label="Details",
        nav="up", detail="plain", bin_place="row"),
)

FOLDER_HELD_OUT = ("tapeshelf",)  # never pretrained on: its tasks measure transfer to an unseen folders app
