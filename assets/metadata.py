"""Small helpers for metadata the Dagster UI shows: tables, thumbnails, charts, distributions,
and `tidy`, which every asset applies last (rounded figures, lineage at the end)."""

import base64
import io
import math
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import dagster as dg
from PIL import Image

if TYPE_CHECKING:
    from ops.evaluation.plots import Chart  # matplotlib loads only in the assets that draw

THUMB_HEIGHT = 320  # a half-size phone screen at 144x320: its labels stay readable
SIGNIFICANT_DIGITS = 3
MAX_CELL_CHARS = 60  # longer cells are cut, so a table fits the UI's metadata column
LINEAGE_KEYS = ("code_version", "config", "upstream")  # what a materialization was built from: shown last


def thumbnail_md(png: bytes, height: int = THUMB_HEIGHT) -> str:
    """A small inline markdown image (data URL) of a screenshot."""
    img = Image.open(io.BytesIO(png)).convert("RGB")
    img = img.resize((max(1, img.width * height // img.height), height), Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=70)
    return f"![](data:image/jpeg;base64,{base64.b64encode(buf.getvalue()).decode()})"


def chart_md(chart: "Chart") -> dg.MetadataValue:
    """A chart inline (PNG data URL), so the asset page shows the picture itself."""
    return dg.MetadataValue.md(f"![{chart.title}](data:image/png;base64,{base64.b64encode(chart.png).decode()})")


def _cell(value: Any) -> str:
    text = str(rounded(value)).replace("\n", " ").replace("|", "/")
    return text if len(text) <= MAX_CELL_CHARS or text.startswith("![") else text[:MAX_CELL_CHARS - 1] + "…"


def md_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> dg.MetadataValue:
    """A markdown table; floats rounded, long text cut to MAX_CELL_CHARS."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return dg.MetadataValue.md("\n".join(lines))


def counts(values: Iterable[Any]) -> dg.MetadataValue:
    return dg.MetadataValue.json(dict(sorted(Counter(str(v) for v in values).items())))


def rounded(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """`value` with every float (also inside lists and dicts) rounded to `digits` significant digits."""
    if isinstance(value, float):
        if value == 0 or not math.isfinite(value):
            return value
        return round(value, digits - 1 - math.floor(math.log10(abs(value))))
    if isinstance(value, Mapping):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits) for v in value]
    return value


def tidy(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata as the UI should show it: figures rounded, lineage (code version, config,
    upstream versions) after everything else. Config is kept exact: it is what was asked for."""
    def tidied(key: str, value: Any) -> Any:
        if key in LINEAGE_KEYS:
            return value
        if isinstance(value, dg.JsonMetadataValue):
            return dg.MetadataValue.json(rounded(value.data))
        if isinstance(value, dg.FloatMetadataValue) and value.value is not None:
            return dg.MetadataValue.float(rounded(value.value))
        return rounded(value) if isinstance(value, float) else value

    ordered = [k for k in metadata if k not in LINEAGE_KEYS] + [k for k in LINEAGE_KEYS if k in metadata]
    return {key: tidied(key, metadata[key]) for key in ordered}
