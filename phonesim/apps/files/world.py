"""Files world data (a seeded folder tree with files, read-only) and the runtime overlay.

Folders are fixed paths ("Documents/Work"); files carry name, folder, size in bytes and a
modified date. Runtime data is an overlay: `put` holds renamed, moved or copied files by id,
`deleted` marks removed ids.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from phonesim import records
from phonesim.dates import TODAY

FOLDERS = ("Documents", "Documents/Receipts", "Documents/Work", "Download", "Movies", "Music", "Pictures",
           "Pictures/Screenshots")
SIZES = {  # extension -> (min, max) bytes
    "pdf": (80_000, 6_000_000), "docx": (20_000, 900_000), "xlsx": (15_000, 2_500_000), "pptx": (900_000, 14_000_000),
    "txt": (300, 40_000), "zip": (2_000_000, 90_000_000), "apk": (8_000_000, 60_000_000), "jpg": (900_000, 7_000_000),
    "png": (150_000, 2_400_000), "mp3": (2_500_000, 11_000_000), "mp4": (15_000_000, 900_000_000),
}
POOLS = {  # folder -> candidate file names
    "Download": ["invoice_feb_2024.pdf", "boarding_pass_LIS.pdf", "paper_draft_v3.pdf", "photos_backup.zip",
                 "spotify_setup.apk", "concert_tickets.pdf", "wallpaper_mountains.jpg", "bank_statement_jan.pdf",
                 "recipe_book.pdf", "manual_dishwasher.pdf", "fonts_pack.zip", "map_lisbon.png"],
    "Documents": ["CV_2024.docx", "tax_return_2023.pdf", "lease_agreement.pdf", "shopping_list.txt",
                  "passport_scan.pdf", "wedding_speech.docx", "budget_2024.xlsx"],
    "Documents/Work": ["Q1_report.xlsx", "kickoff_slides.pptx", "meeting_minutes.docx", "roadmap.pptx",
                       "contract_acme.pdf", "timesheet_feb.xlsx"],
    "Documents/Receipts": ["receipt_grocer_0214.pdf", "receipt_pharmacy_0221.pdf", "receipt_hardware_0302.pdf",
                           "receipt_cinema_0225.pdf", "receipt_taxi_0119.pdf"],
    "Pictures": ["IMG_20240112_0932.jpg", "IMG_20240203_1755.jpg", "IMG_20240214_2010.jpg", "IMG_20240222_1204.jpg",
                 "IMG_20240301_0815.jpg", "profile_photo.jpg", "beach_sunset.jpg"],
    "Pictures/Screenshots": ["Screenshot_20240201-101522.png", "Screenshot_20240215-213004.png",
                             "Screenshot_20240228-080941.png", "Screenshot_20240302-174512.png"],
    "Music": ["Morning Run Mix.mp3", "Lo-fi Study.mp3", "Jazz Standards.mp3", "Podcast Ep 12.mp3",
              "Road Trip.mp3", "Piano Sonata.mp3"],
    "Movies": ["VID_20240110_1432.mp4", "birthday_party.mp4", "drone_coast.mp4", "lecture_recording.mp4"],
}


def parent(path: str) -> str:
    return path.rpartition("/")[0]


def make_world(seed: int) -> dict[str, Any]:
    rng = random.Random(f"files:{seed}")
    files, i = {}, 0
    for folder in FOLDERS:
        names = POOLS[folder]
        for name in rng.sample(names, k=max(3, len(names) - rng.randint(0, 2))):
            i += 1
            lo, hi = SIZES[name.rsplit(".", 1)[1]]
            files[f"f{i}"] = {"id": f"f{i}", "name": name, "folder": folder, "size": rng.randint(lo, hi),
                              "modified": (TODAY - timedelta(days=rng.randint(0, 120))).isoformat()}
    return {"files": files}


def initial_data(world: dict[str, Any]) -> dict[str, Any]:
    return records.overlay()


def all_files(world: dict[str, Any], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Merged files sorted by name."""
    return sorted(records.merged(world["files"], data),
                  key=lambda f: (f["name"].casefold(), f["id"]))


def get_file(world: dict[str, Any], data: dict[str, Any], fid: str) -> dict[str, Any] | None:
    return records.get(world["files"], data, fid)


def subfolders(path: str) -> list[str]:
    return [f for f in FOLDERS if parent(f) == path]


def human_size(size: int) -> str:
    """SI units, as Android's file manager shows them."""
    if size < 1_000_000:
        return f"{max(1, round(size / 1000))} kB"
    if size < 1_000_000_000:
        return f"{size / 1_000_000:.1f} MB"
    return f"{size / 1_000_000_000:.2f} GB"


def view(world: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Judge view: `files` by id with the overlay applied."""
    return {"files": {f["id"]: f for f in all_files(world, data)}}
