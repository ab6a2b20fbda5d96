"""The hand-written timed-entry apps (`phonesim.pretrain.timed`): medication times that repeat on week
days, and work shifts on dates. Their names, entries and words are the pretraining world's own
(`tests/phonesim/test_disjoint.py` checks them against the target world); their layouts differ on every
knob, so neither is the only arrangement of the kind the base sees.
"""

from __future__ import annotations

from phonesim.pretrain.collection import Attribute
from phonesim.pretrain.timed import TimedSpec

TIMED_SPECS = (
    TimedSpec(
        name="pillbox", label="Pillbox", package="org.pretrain.pillbox", color="#00897b", glyph="check",
        noun="dose", plural="doses",
        titles=("Iron tablet", "Vitamin D", "Allergy spray", "Fish oil", "Eye drops", "Magnesium", "Zinc lozenge",
                "Probiotic", "Calcium chew", "Thyroid pill", "Inhaler puff", "Folic acid", "Cough syrup",
                "Ginger capsule", "B12 drops", "Nasal rinse", "Omega chew", "Joint balm"),
        new_titles=("Sleep tea", "Hay fever tab", "Lutein softgel", "Arnica gel", "Biotin gummy", "Ear drops"),
        attribute=Attribute("strength", "Strength", numbers=(5, 500), unit="mg"),
        schedule="days", hours=(6, 23), step=15, on_word="Active", time_label="Time", title_label="Medicine",
        copy_word="Duplicate", delete_word="Delete", edit="button", sub_line="schedule", flag_widget="switch"),
    # --- held out of pretraining: its templates measure transfer to a timed app never trained on ----
    TimedSpec(
        name="shiftboard", label="Shiftboard", package="org.pretrain.shiftboard", color="#5e35b1", glyph="group",
        noun="shift", plural="shifts",
        titles=("Front desk", "Night watch", "Loading bay", "Café counter", "Stockroom", "Box office", "Ticket gate",
                "Cloakroom", "Bakery oven", "Reception", "Car park", "Pool deck", "Gift shop", "Back office",
                "Garden centre", "Snack bar", "Lift lobby", "Help point"),
        new_titles=("Coat check", "Juice stand", "Bike rental", "Info kiosk", "Ice rink", "Rooftop bar"),
        attribute=Attribute("length", "Length", numbers=(2, 12), unit="hours"),
        schedule="date", hours=(5, 22), step=30, on_word="Confirmed", time_label="Starts at", title_label="Post",
        copy_word="Copy", delete_word="Remove", edit="icon", sub_line="attribute", flag_widget="checkbox"),
)

TIMED_HELD_OUT = ("shiftboard",)  # never pretrained on: its tasks measure transfer to an unseen timed app
