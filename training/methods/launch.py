"""Command-line entry for training runs, on CPU or under `accelerate launch` on GPUs.

    python -m training.methods.launch hifpo --config cfg.yaml --base MODEL_DIR --dataset DS_DIR --out OUT_DIR
    python -m training.methods.launch sft --method rft --config cfg.yaml --base ... --dataset ... --out ...
    accelerate launch --config_file training/trainers/accelerate/fsdp.yaml -m training.methods.launch hifpo ...

The config file (YAML or JSON) holds HiFPOConfig / SFTTrainConfig fields, optionally
`preset: cpu_tiny` to start from the CPU preset instead of the papers' GPU defaults (`paper`); `--set k=v`
overrides single fields. `--dry-run` validates everything and builds the trainer (model,
processor, filtered dataset, TRL config) without training. See docs/gpu.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import click
import torch
import yaml
from pydantic import ValidationError

from training.trainers.settings import Preset

# Settings a CPU-only machine cannot build; a dry run there swaps them out and says so.
_CPU_SUBSTITUTES = {
    "bf16": False,
    "model_dtype": "float32",
    "gradient_checkpointing": False,
    "use_vllm": False,
}


def read_config_file(path: Path | None) -> dict[str, Any]:
    """Fields from a YAML/JSON config file (empty without one)."""
    if path is None:
        return {}
    text = path.read_text()
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path} must hold a mapping of config fields, got {type(data).__name__}")
    return data


def parse_overrides(pairs: tuple[str, ...]) -> dict[str, Any]:
    """`--set key=value` pairs; values are read as YAML scalars (numbers, booleans, null, lists)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"--set expects key=value, got {pair!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def build_config(kind: str, fields: dict[str, Any]):
    """HiFPOConfig (kind 'hifpo') or SFTTrainConfig (kind 'sft') from config fields.

    Raises click.UsageError naming the offending field(s) when the config is invalid.
    """
    from training.methods.hifpo.config import HiFPOConfig
    from training.trainers.sft_config import SFTTrainConfig

    cls = HiFPOConfig if kind == "hifpo" else SFTTrainConfig
    fields = dict(fields)
    preset = fields.pop("preset", "paper")
    if preset not in get_args(Preset):
        raise click.UsageError(f"preset must be one of {get_args(Preset)}, got {preset!r}")
    try:
        return cls.preset(preset, fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())
        raise click.UsageError(f"invalid {kind} config — {problems}") from None


def _cpu_substitutes(config) -> dict[str, Any]:
    return {
        k: v
        for k, v in _CPU_SUBSTITUTES.items()
        if k in type(config).model_fields and getattr(config, k) != v
    }


def _summary(run, config, out: Path, substituted: dict[str, Any]) -> dict[str, Any]:
    from training.trainers.lora import parameter_counts

    args = run.trainer.args
    summary = {
        "out_dir": str(out),
        "dataset_rows": len(run.dataset),
        "train_rows": run.train_rows,
        "dropped": run.dropped,
        "trainer": type(run.trainer).__name__,
        **parameter_counts(run.trainer.model),  # with LoRA, trainable_parameters are the adapters'
        "processes": args.world_size,
        "config": config.model_dump(mode="json"),
    }
    if hasattr(args, "generation_batch_size"):
        summary["generation_batch_size"] = args.generation_batch_size
        summary["completions_per_optimizer_step"] = (
            args.per_device_train_batch_size * args.gradient_accumulation_steps * args.world_size
        )
    if substituted:
        summary["cpu_substitutes"] = substituted
    return summary


def _run(
    kind: str,
    method: str,
    config_path: Path | None,
    sets: tuple[str, ...],
    base: Path,
    dataset: Path,
    out: Path,
    dry_run: bool,
    report_path: Path | None = None,
) -> None:
    config = build_config(kind, {**read_config_file(config_path), **parse_overrides(sets)})
    if kind == "hifpo":
        from training.methods.hifpo.trainer import prepare_hifpo as prepare
        from training.methods.hifpo.trainer import train_hifpo as train
    else:
        from training.trainers.sft import prepare_sft as prepare
        from training.trainers.sft import train_sft

        def train(b, d, o, c):
            return train_sft(b, d, o, c, method=method)

    if dry_run:
        substituted = {} if torch.cuda.is_available() else _cpu_substitutes(config)
        if substituted:
            click.echo(
                f"no GPU here: building with {substituted} instead (the GPU values were validated)", err=True
            )
            config = config.model_copy(update=substituted)
        run = prepare(base, dataset, out, config)
        if run.trainer.accelerator.is_main_process:
            click.echo(json.dumps(_summary(run, config, out, substituted), indent=2))
        return
    report = train(base, dataset, out, config)
    if report.manifest_path is not None and report_path is not None:  # read back by the step that launched it
        from training.methods.launched import write_report

        write_report(report, report_path)
    if report.manifest_path is not None:  # the main process reports
        last = {name: points[-1][1] for name, points in report.curves.items() if points}
        click.echo(
            json.dumps(
                {
                    "method": report.method,
                    "checkpoint": str(report.checkpoint),
                    "steps": report.steps,
                    "runtime_s": round(report.runtime_s, 2),
                    "seconds_per_step": round(report.seconds_per_step, 3),
                    "samples": report.samples,
                    "dropped": report.dropped,
                    "last": last,
                    "manifest": str(report.manifest_path),
                },
                indent=2,
            )
        )


def _common(fn):
    options = [
        click.option(
            "--config",
            "config_path",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="YAML/JSON file of config fields (optionally `preset: cpu_tiny`).",
        ),
        click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one config field."),
        click.option(
            "--base",
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            required=True,
            help="Local base checkpoint directory (nothing is downloaded).",
        ),
        click.option(
            "--dataset",
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            required=True,
            help="Step dataset directory written by training.trainers.step_datasets.save_step_dataset.",
        ),
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            required=True,
            help="Directory the trained checkpoint and manifest.json are written to.",
        ),
        click.option("--dry-run", is_flag=True, help="Build everything, print a summary, do not train."),
        click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="Write the main process's training report (JSON) here (training.methods.launched)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.group()
def main() -> None:
    """Train MobileForge policies (HiFPO step-level GRPO; SFT for RFT and GRSD)."""


@main.command()
@_common
def hifpo(config_path, sets, base, dataset, out, dry_run, report_path) -> None:
    """HiFPO: step-level GRPO with the adaptive GUI action reward."""
    _run("hifpo", "hifpo", config_path, sets, base, dataset, out, dry_run, report_path)


@main.command()
@click.option(
    "--method",
    type=click.Choice(["sft", "rft", "grsd", "hint_sft", "no_hint_sft"]),
    default="sft",
    show_default=True,
    help="What the SFT samples are (recorded in the manifest).",
)
@_common
def sft(method, config_path, sets, base, dataset, out, dry_run, report_path) -> None:
    """SFT on step samples with responses (RFT rounds, GRSD fork-point samples)."""
    _run("sft", method, config_path, sets, base, dataset, out, dry_run, report_path)


if __name__ == "__main__":
    main()
