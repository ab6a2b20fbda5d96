"""Screenshot storage: PNG bytes in a Parquet column vs. a content-addressed blob store.

Writes N rollout-like rows (default 2,000) whose screenshots are 1080×2400 phone-like PNGs
drawn from a small pool of distinct screens — rollouts revisit the same screens many
times — and stores them three ways:

  inline        PNG bytes in a binary column (pyarrow defaults: snappy, dictionary page
                limit 1 MiB, so large PNGs fall back to plain encoding and repeats are kept)
  inline_dict   the same column with a dictionary page limit large enough that every distinct
                PNG is stored once per row group (dedup inside the Parquet file)
  stored        what the IO manager writes: ops.data.schemas.PARQUET_WRITE_OPTIONS (dictionary
                limit raised, zstd)
  blobs         `<dir>/blobs/<sha[:2]>/<sha256>.png` written once per distinct screen, and a
                Parquet table holding the sha256 reference

Prints write time, read time (reading the table *and* materializing every row's PNG bytes)
and bytes on disk for each, plus ratios against `inline`.

    python benchmarks/screenshot_storage.py [--rows 2000] [--screens 120]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import random
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from ops.data.schemas import PARQUET_WRITE_OPTIONS

WIDTH, HEIGHT = 1080, 2400


def render_screen(seed: int) -> bytes:
    """A phone-like screen: status bar, app bar, list rows with text and icons, a FAB."""
    rng = random.Random(seed)
    img = Image.new("RGB", (WIDTH, HEIGHT), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    accent = tuple(rng.randrange(30, 200) for _ in range(3))
    draw.rectangle((0, 0, WIDTH, 80), fill=(20, 20, 20))
    draw.text((40, 25), f"12:{seed % 60:02d}", fill=(255, 255, 255))
    draw.rectangle((0, 80, WIDTH, 260), fill=accent)
    draw.text((60, 150), f"Screen {seed}: {rng.choice(['Inbox', 'Settings', 'Notes'])}",
              fill=(255, 255, 255))
    y = 300
    while y < HEIGHT - 200:
        row_h = rng.choice((140, 180, 220))
        draw.ellipse((50, y + 20, 150, y + 120), fill=tuple(rng.randrange(256) for _ in range(3)))
        for line in range(rng.randint(1, 3)):
            words = " ".join(rng.choice(["alpha", "budget", "call", "draft", "event", "file",
                                         "group", "home", "item", "joke"])
                             for _ in range(rng.randint(2, 7)))
            draw.text((190, y + 30 + 40 * line), words, fill=(40, 40, 40))
        draw.line((190, y + row_h - 2, WIDTH - 40, y + row_h - 2), fill=(220, 220, 220), width=2)
        y += row_h
    draw.ellipse((WIDTH - 220, HEIGHT - 320, WIDTH - 60, HEIGHT - 160), fill=accent)
    draw.rectangle((0, HEIGHT - 130, WIDTH, HEIGHT), fill=(235, 235, 235))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--screens", type=int, default=120, help="distinct screens in the pool")
    args = parser.parse_args()

    t_render, pool = timed(lambda: [render_screen(i) for i in range(args.screens)])
    rng = random.Random(0)
    # Rollouts revisit screens: a skewed draw so popular screens (home, lists) dominate.
    weights = [1.0 / (rank + 1) for rank in range(args.screens)]
    picks = rng.choices(range(args.screens), weights=weights, k=args.rows)
    pngs = [pool[i] for i in picks]
    raw = sum(len(p) for p in pngs)
    print(f"{args.rows} rows, {len(set(picks))} distinct of {args.screens} screens, "
          f"mean PNG {raw / args.rows / 1024:.0f} KiB, raw bytes {raw / 2**20:.1f} MiB "
          f"(rendering took {t_render:.1f} s)")

    meta = {"task_id": [f"t{i // 20}" for i in range(args.rows)],
            "step": [i % 20 for i in range(args.rows)]}
    results: dict[str, tuple[float, float, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def inline(name: str, **write_kwargs) -> None:
            path = root / name / "data.parquet"
            path.parent.mkdir(parents=True)
            table = pa.table({**meta, "screenshot": pa.array(pngs, pa.binary())})
            t_w, _ = timed(lambda: pq.write_table(table, path, **write_kwargs))
            t_r, back = timed(lambda: pq.read_table(path).column("screenshot").to_pylist())
            assert back == pngs
            results[name] = (t_w, t_r, dir_bytes(path.parent))

        inline("inline")
        inline("inline_dict", dictionary_pagesize_limit=1 << 30)
        inline("stored", **PARQUET_WRITE_OPTIONS)

        def write_blobs() -> None:
            out = root / "blobs_store"
            refs = []
            for png in pngs:
                sha = hashlib.sha256(png).hexdigest()
                blob = out / "blobs" / sha[:2] / f"{sha}.png"
                if not blob.exists():
                    blob.parent.mkdir(parents=True, exist_ok=True)
                    blob.write_bytes(png)
                refs.append(sha)
            pq.write_table(pa.table({**meta, "screenshot_sha256": refs}), out / "data.parquet")

        def read_blobs() -> list[bytes]:
            out = root / "blobs_store"
            refs = pq.read_table(out / "data.parquet").column("screenshot_sha256").to_pylist()
            return [(out / "blobs" / r[:2] / f"{r}.png").read_bytes() for r in refs]

        t_w, _ = timed(write_blobs)
        t_r, back = timed(read_blobs)
        assert back == pngs
        results["blobs"] = (t_w, t_r, dir_bytes(root / "blobs_store"))

    base_w, base_r, base_b = results["inline"]
    print(f"{'layout':<12} {'write s':>8} {'read s':>8} {'MiB':>8}  vs inline (write/read/bytes)")
    for name, (t_w, t_r, size) in results.items():
        print(f"{name:<12} {t_w:8.3f} {t_r:8.3f} {size / 2**20:8.1f}  "
              f"{t_w / base_w:5.2f}x {t_r / base_r:5.2f}x {size / base_b:5.3f}x")


if __name__ == "__main__":
    main()
