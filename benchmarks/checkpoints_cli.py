"""What the base-checkpoint measures share: their command line (checkpoints, the episode cache) and the
checkpoints loaded one after another, on one torch thread."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import torch

from training.base.pretrain import PolicyTextEncoder
from training.models.tiny import load_tiny


def checkpoint_parser(doc: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--cache-dir", type=Path, default=Path(".mobileforge/base_pretrain_cache"))
    return parser


def loaded_checkpoints(checkpoints: list[str]) -> Iterator[tuple[str, torch.nn.Module, PolicyTextEncoder]]:
    """(path, model, its prompt encoder) for each checkpoint, loaded as the previous one is done."""
    torch.set_num_threads(1)
    for checkpoint in checkpoints:
        model, processor = load_tiny(checkpoint)
        yield checkpoint, model, PolicyTextEncoder(processor)
