"""`mobileforge base`: pretrain the embedded base policy, or check the bundled one."""

import json
import os
from pathlib import Path

import click


@click.group()
def base() -> None:
    """The embedded base policy (tiny Qwen2-VL, pretrained on generic grounding only)."""


@base.command()
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Checkpoint directory to write (training/base/checkpoint replaces the bundled base).")
@click.option("--max-steps", default=6000, show_default=True, help="Optimizer steps (the bundled base's budget).")
@click.option("--max-seconds", default=7200.0, show_default=True, help="Wall-clock cap of the training loop.")
@click.option("--seed", default=0, show_default=True, help="Seed of the model init and the data.")
@click.option("--context-share", default=0.5, show_default=True,
              help="Share of click samples turned into episode-context skills (history, terminate, hints).")
@click.option("--page-share", default=0.0, show_default=True,
              help="Share of samples that are page actions (open an entry, press a button on its page).")
@click.option("--threads", default=1, show_default=True, help="torch CPU threads.")
@click.option("--text-hidden", default=64, show_default=True, help="Hidden size of the language model.")
@click.option("--layers", default=2, show_default=True, help="Transformer layers of the language model.")
@click.option("--heads", default=4, show_default=True, help="Attention heads of the language model.")
@click.option("--recipe", type=click.Choice(["sim", "world"]), default="sim", show_default=True,
              help="sim: grounding on the target apps' screens; world: the pretraining world only "
              "(phonesim.pretrain), nothing of the target apps.")
@click.option("--structured-every", default=0, show_default=True,
              help="World recipe: every n-th step trains on MobileWizard-style structured samples (0: never).")
@click.option("--copy-share", type=click.FloatRange(0, 1), default=None,
              help="World recipe: share of samples that are verbatim copies (clicks on launchers of invented apps "
              "drawn per sample, episode clicks on rows the instruction or a hint line names). Default: 0.3 with "
              "--recipe world (docs/base-ceiling.md, R3; 0 gives R2's recipe), 0 with --recipe sim.")
@click.option("--prompt-loss/--no-prompt-loss", default=True, show_default=True,
              help="Also train next-token prediction on the prompt's text, not only on the answer.")
@click.option("--checkpoint-every", default=250, show_default=True,
              help="Steps between saves; run the same command again to resume an interrupted run.")
@click.option("--cache-dir", default=Path(".mobileforge/base_pretrain_cache"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Where the world recipe keeps its solved episodes.")
@click.option("--solve-workers", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="CPU cores",
              help="World recipe: processes searching the solutions its store lacks (`mobileforge base solve-world` "
              "refreshes the store; the same episodes for any number).")
def pretrain(out: Path, max_steps: int, max_seconds: float, seed: int, context_share: float, page_share: float,
             threads: int, text_hidden: int, layers: int, heads: int, recipe: str, structured_every: int,
             copy_share: float | None, prompt_loss: bool, checkpoint_every: int, cache_dir: Path,
             solve_workers: int) -> None:
    """Pretrain the base policy into OUT and record its provenance (resumes an interrupted run in OUT)."""
    from pydantic import ValidationError

    from training.base.pretrain import BasePretrainConfig
    from training.base.bundled import WORLD_COPY_SHARE, pretrain_embedded_base

    if copy_share is None:
        copy_share = WORLD_COPY_SHARE if recipe == "world" else 0.0

    try:
        config = BasePretrainConfig(max_steps=max_steps, max_seconds=max_seconds, seed=seed, threads=threads,
                                    text_hidden=text_hidden, layers=layers, heads=heads,
                                    structured_every=structured_every, copy_share=copy_share, prompt_loss=prompt_loss,
                                    checkpoint_every=checkpoint_every)
    except ValidationError as exc:
        raise click.BadParameter(str(exc)) from None

    def progress(step: int, loss: float, seconds: float) -> None:
        click.echo(f"step {step}/{max_steps}  loss {loss:.3f}  {step / max(seconds, 1e-9):.1f} steps/s", err=True)

    command = (f"mobileforge base pretrain --out {out} --max-steps {max_steps} --max-seconds {max_seconds:g} "
               f"--seed {seed} --context-share {context_share:g} --page-share {page_share:g} --threads {threads} "
               f"--text-hidden {text_hidden} --layers {layers} --heads {heads} --recipe {recipe} "
               f"--structured-every {structured_every} --copy-share {copy_share:g}"
               + ("" if prompt_loss else " --no-prompt-loss"))
    report = pretrain_embedded_base(out, config, context_share, page_share, command, progress, recipe=recipe,
                                    cache=cache_dir, solve_workers=solve_workers)
    click.echo(json.dumps({"checkpoint": str(out), "steps": report.steps, "train_seconds": round(report.train_seconds),
                           "click_accuracy": round(report.click_accuracy, 3),
                           "click_chance": round(report.click_chance, 3),
                           "per_skill_exact": {k: round(v.exact, 3) for k, v in report.per_skill.items()}}, indent=2))


@base.command("solve-world")
@click.option("--workers", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="CPU cores",
              help="Processes searching (a template's instances in one).")
def solve_world(workers: int) -> None:
    """Search every pretraining instance the world recipe uses and rewrite the repository's solutions store
    (training/base/world_solutions.json.gz), after the pretraining world has changed."""
    import time

    from training.base.world_recipe import recipe_jobs
    from training.base.world_solutions import STORE, write_store

    jobs, started = recipe_jobs(), time.monotonic()
    store = write_store(jobs, workers)
    missed = sum(path is None for path in store.paths.values())
    click.echo(f"{len(store.paths)} instances searched in {time.monotonic() - started:.0f} s ({workers} workers), "
               f"{missed} without a solution within the solver's limits; wrote {STORE} "
               f"({STORE.stat().st_size / 1e6:.2f} MB, simulator {store.digest})")


@base.command()
def check() -> None:
    """Check the bundled base against the current prompt format and print its provenance."""
    from training.base.bundled import BUNDLED_DIR, BundledBaseError, load_bundled

    try:
        provenance, report = load_bundled()
    except BundledBaseError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps({"directory": str(BUNDLED_DIR), **provenance,
                           "click_accuracy": report["click_accuracy"], "click_chance": report["click_chance"],
                           "steps": report["steps"]}, indent=2))
