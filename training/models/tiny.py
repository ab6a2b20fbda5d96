"""Offline builder for the embedded tiny policy: a Qwen2-VL-architecture model with random
weights, its own byte-level BPE tokenizer and an image+text processor, saved as a normal
Hugging Face checkpoint directory (nothing is downloaded).

The checkpoint loads with `Qwen2VLForConditionalGeneration.from_pretrained` /
`AutoModelForImageTextToText.from_pretrained`; the processor loads with `load_tiny` (or
`TinyQwen2VLProcessor.from_pretrained`) and is accepted by TRL's SFTTrainer/GRPOTrainer as
`processing_class`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    PreTrainedTokenizerFast,
    Qwen2VLConfig,
    Qwen2VLForConditionalGeneration,
    Qwen2VLImageProcessorPil,
    Qwen2VLProcessor,
)

from ops.actions import DIRECTIONS, SYSTEM_BUTTONS, ActionType

# Special tokens the Qwen2-VL processor and chat template rely on; ids 0..n-1 in this order.
ENDOFTEXT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
VISION_START = "<|vision_start|>"
VISION_END = "<|vision_end|>"
IMAGE_PAD = "<|image_pad|>"
VIDEO_PAD = "<|video_pad|>"
SPECIAL_TOKENS = (ENDOFTEXT, IM_START, IM_END, VISION_START, VISION_END, IMAGE_PAD, VIDEO_PAD)

# Qwen2-VL's chat format without the default system prompt (keeps sequences short).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
    "<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# Image budget: Qwen2-VL resizes each image so that H*W lies in [min_pixels, max_pixels], in
# 28-pixel units (patch 14 x merge 2). One 28x28 unit is one token for the language model.
# With max 28*28*64 a 270x600 screen becomes 140x308 pixels = 5x11 = 55 image tokens (220
# vision patches); generation of 30 tokens then takes ~0.12 s on the default model.
DEFAULT_MIN_PIXELS = 28 * 28 * 4
DEFAULT_MAX_PIXELS = 28 * 28 * 64


class TinyQwen2VLProcessor(Qwen2VLProcessor):
    """Qwen2-VL processor with only an image processor and a tokenizer.

    The stock processor also builds a video processor, which needs torchvision (not installed
    here); declaring only these two sub-processors lets it load and run on the PIL backend.
    """

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        super().__init__(image_processor, tokenizer, video_processor=None, chat_template=chat_template, **kwargs)


def _builtin_corpus() -> list[str]:
    """Text the tokenizer is trained on: action JSON, chat scaffolding, UI words, numbers."""
    ui_words = (
        "Settings Wi-Fi Bluetooth Display Sound Battery Storage Apps Notifications Privacy "
        "Security Location Accounts Google System About phone Network internet Connected devices "
        "Contacts Phone Messages Camera Gallery Photos Clock Calendar Calculator Chrome Files "
        "Maps Music Notes Email Gmail Play Store YouTube Weather Recorder Browser Drive "
        "OK Cancel Save Delete Edit Add New Search Back Next Done Send Share Menu More Close Open "
        "Allow Deny Yes No Confirm Submit Sign in out Login Logout Skip Continue Retry Undo "
        "Name First Last Email Mobile Home Work Address Password Username Message Subject Title "
        "On Off Enable Disable Dark mode Brightness Volume Ringtone Alarm Timer Stopwatch "
        "Today Tomorrow Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
        "January February March April May June July August September October November December "
        "Alice Bob Carol David Emma Frank Grace Henry Isabel Jack Kate Liam Mia Noah Olivia"
    )
    lines = [ui_words, ui_words.lower()]
    for t in ActionType:
        lines.append(json.dumps({"type": t.value, "args": {}}, separators=(",", ":")))
    lines += [
        '{"type":"click","args":{"element":3}}',
        '{"type":"click","args":{"point":[500,250]}}',
        '{"type":"type","args":{"text":"hello world"}}',
        '{"type":"swipe","args":{"direction":"up"}}',
        '{"type":"system_button","args":{"button":"back"}}',
        '{"type":"open_app","args":{"app":"Settings"}}',
        '{"type":"answer","args":{"text":"42"}}',
        '{"type":"terminate","args":{"status":"success"}}',
        " ".join(SYSTEM_BUTTONS),
        " ".join(DIRECTIONS),
        "Tap the element labelled. Type into the focused field. Go back. Scroll down. Scroll up. "
        "Open app. Answer the question. Long press. Press home. Elements: Instruction: Task:",
        f"{IM_START}user\n{VISION_START}{IMAGE_PAD}{VISION_END}{IM_END}\n{IM_START}assistant\n",
    ]
    lines += [" ".join(str(n) for n in range(start, start + 50)) for start in range(0, 1001, 50)]
    # Repeated so that the chat scaffolding and JSON keys win merges over any extra corpus text.
    return lines * 20


def build_tokenizer(vocab_size: int, corpus: Iterable[str] = ()) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer offline on the built-in corpus plus `corpus`."""
    texts = _builtin_corpus() + list(corpus)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token=ENDOFTEXT,
        eos_token=IM_END,
        pad_token=ENDOFTEXT,
        unk_token=None,
        additional_special_tokens=[IM_START, VISION_START, VISION_END, IMAGE_PAD, VIDEO_PAD],
        model_max_length=4096,
    )
    # Qwen2-VL's rope index needs left padding when prompts of different lengths are batched.
    tokenizer.padding_side = "left"
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def _mrope_section(head_dim: int) -> list[int]:
    """Split head_dim/2 rotary frequencies over (time, height, width) like Qwen2-VL's 16/24/24."""
    half = head_dim // 2
    hw = 3 * half // 8
    return [half - 2 * hw, hw, hw]


def check_sizes(text_hidden: int, heads: int, vision_embed: int, vision_heads: int = 2) -> None:
    """Raise ValueError unless the widths split into heads Qwen2-VL's rotary embeddings can use."""
    if text_hidden % heads or (text_hidden // heads) % 2:
        raise ValueError(f"text_hidden={text_hidden} must split into {heads} heads of even size")
    if (text_hidden // heads) // 2 < 3:
        raise ValueError(f"head size {text_hidden // heads} too small for Qwen2-VL's 3-axis rope")
    if vision_embed % vision_heads or (vision_embed // vision_heads) % 4:
        raise ValueError(f"vision_embed={vision_embed} must split into {vision_heads} heads, size % 4 == 0")


def build_tiny_model(
    out_dir: str | Path,
    *,
    text_hidden: int = 64,
    layers: int = 2,
    heads: int = 4,
    intermediate: int | None = None,
    vision_depth: int = 2,
    vision_embed: int = 32,
    vision_heads: int = 2,
    vocab_size: int = 1024,
    init_std: float | None = None,
    min_pixels: int = DEFAULT_MIN_PIXELS,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    seed: int = 0,
    corpus: Iterable[str] | None = None,
) -> Path:
    """Build and save a randomly initialised tiny Qwen2-VL checkpoint; returns `out_dir`.

    `corpus` adds text to the tokenizer's training data (e.g. the app's UI labels) so common
    words become single tokens. `init_std` (default hidden**-0.5) replaces Qwen2's 0.02, which
    is sized for wide models: at width 64 it leaves attention logits near zero and training
    sits on a long plateau (measured: base_pretrain LOG). The directory holds config, safetensors weights, tokenizer,
    image processor and chat template.
    """
    check_sizes(text_hidden, heads, vision_embed, vision_heads)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)

    tokenizer = build_tokenizer(vocab_size, corpus or ())
    ids = {tok: tokenizer.convert_tokens_to_ids(tok) for tok in SPECIAL_TOKENS}
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": text_hidden,
            "intermediate_size": intermediate or 4 * text_hidden,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "num_key_value_heads": heads,
            "max_position_embeddings": 4096,
            "initializer_range": init_std or text_hidden**-0.5,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": _mrope_section(text_hidden // heads),
            },
            "bos_token_id": ids[ENDOFTEXT],
            "eos_token_id": ids[IM_END],
            "pad_token_id": ids[ENDOFTEXT],
        },
        vision_config={
            "depth": vision_depth,
            "embed_dim": vision_embed,
            "hidden_size": text_hidden,
            "num_heads": vision_heads,
            "mlp_ratio": 2,
            "initializer_range": vision_embed**-0.5,
        },
        image_token_id=ids[IMAGE_PAD],
        video_token_id=ids[VIDEO_PAD],
        vision_start_token_id=ids[VISION_START],
        vision_end_token_id=ids[VISION_END],
        bos_token_id=ids[ENDOFTEXT],
        eos_token_id=ids[IM_END],
        pad_token_id=ids[ENDOFTEXT],
        tie_word_embeddings=True,
        initializer_range=init_std or text_hidden**-0.5,
    )
    model = Qwen2VLForConditionalGeneration(config)
    model.generation_config.bos_token_id = ids[ENDOFTEXT]
    model.generation_config.eos_token_id = ids[IM_END]
    model.generation_config.pad_token_id = ids[ENDOFTEXT]
    model.save_pretrained(out)

    image_processor = Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels)
    processor = TinyQwen2VLProcessor(image_processor, tokenizer, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(out)
    return out


def load_tiny(path: str | Path) -> tuple[Qwen2VLForConditionalGeneration, TinyQwen2VLProcessor]:
    """Load a checkpoint written by `build_tiny_model` (or trained from one)."""
    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no tiny model checkpoint at {path} (config.json missing)")
    model = Qwen2VLForConditionalGeneration.from_pretrained(path)
    processor = TinyQwen2VLProcessor.from_pretrained(path)
    processor.tokenizer.padding_side = "left"
    return model, processor
