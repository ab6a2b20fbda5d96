"""Small helpers for metadata the Dagster UI shows: tables, thumbnails, distributions."""

import base64
import io
from collections import Counter
from typing import Any, Iterable, Sequence

import dagster as dg
from PIL import Image

THUMB_HEIGHT = 96


def thumbnail_md(png: bytes, height: int = THUMB_HEIGHT) -> str:
    """A small inline markdown image (data URL) of a screenshot."""
    img = Image.open(io.BytesIO(png)).convert("RGB")
    img = img.resize((max(1, img.width * height // img.height), height), Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=60)
    return f"![](data:image/jpeg;base64,{base64.b64encode(buf.getvalue()).decode()})"


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> dg.MetadataValue:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("\n", " ").replace("|", "/") for c in row) + " |")
    return dg.MetadataValue.md("\n".join(lines))


def counts(values: Iterable[Any]) -> dg.MetadataValue:
    return dg.MetadataValue.json(dict(sorted(Counter(str(v) for v in values).items())))
