"""`mobileforge sim`: list simulator tasks, render screens, play interactively, benchmark."""

from __future__ import annotations

import json
import sys

import click

from phonesim import Episode, all_templates, instantiate, parse_short, solve


def _size(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"expected WIDTHxHEIGHT, got {value!r}") from None
    return w, h


def _task(template_id: str, seed: int):
    try:
        return instantiate(template_id, seed)
    except KeyError as exc:
        raise click.BadParameter(str(exc), param_hint="--task") from None


@click.group()
def sim() -> None:
    """The embedded phone simulator (phonesim)."""


@sim.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per template.")
@click.option("--split", type=click.Choice(["train", "test"]), default=None)
@click.option("--app", default=None, help="Only templates using this app.")
def tasks(as_json: bool, split: str | None, app: str | None) -> None:
    """List task templates."""
    for t in all_templates().values():
        if (split and t.split != split) or (app and app not in t.apps):
            continue
        if as_json:
            click.echo(json.dumps(t.describe()))
        else:
            click.echo(f"{t.id:45s} {t.objective:8s} {t.composition:10s} L{t.difficulty} {t.split:5s} "
                       f"budget={t.step_budget:<3d} {t.instructions[0]}")


@sim.command("render")
@click.option("--task", "template_id", required=True, help="Task template id (see `sim tasks`).")
@click.option("--seed", default=0, show_default=True)
@click.option("--steps", default=0, show_default=True, help="Play this many steps of the solution first.")
@click.option("--size", default="1080x2400", show_default=True, callback=_size)
@click.option("--out", type=click.Path(dir_okay=False), required=True)
def render_cmd(template_id: str, seed: int, steps: int, size: tuple[int, int], out: str) -> None:
    """Render a task's screen (initial, or after N solution steps) to a PNG file."""
    task = _task(template_id, seed)
    phone = task.make_phone(size=size)
    for a in (solve(phone, task)[:steps] if steps else []):
        phone.step(a)
    obs = phone.observe()
    with open(out, "wb") as f:
        f.write(obs.png)
    click.echo(f"{task.instruction}\n{obs.app}/{obs.screen} -> {out} ({len(obs.elements)} elements)")


def _print_observation(phone, verbose_tree: bool) -> None:
    obs = phone.observe()
    click.echo(f"--- {obs.app}/{obs.screen}")
    for e in obs.elements:
        flags = "".join(f for f, on in (("C", e["clickable"]), ("L", e["long_clickable"]), ("F", e["focused"]),
                                        ("S", e["scrollable"]), ("✓", e["checked"])) if on)
        label = e["text"].replace("\n", " | ") or f"[{e['desc']}]"
        click.echo(f"{e['index']:3d} {flags:4s} {label[:60]:60s} {e['class'].rsplit('.', 1)[-1]:14s} {e['grid']}")
    if verbose_tree:
        click.echo(json.dumps(obs.a11y, indent=1))


@sim.command()
@click.option("--task", "template_id", default=None, help="Play a task (judged at the end); default: free play.")
@click.option("--seed", default=0, show_default=True)
@click.option("--tree", is_flag=True, help="Also print the accessibility tree after each step.")
def play(template_id: str | None, seed: int, tree: bool) -> None:
    """Interactive: read one action per line (short syntax or canonical JSON) from stdin.

    Short syntax: tap I | tap X Y | long I | type TEXT | swipe up|down | back | home | recent |
    enter | open APP | answer TEXT | key NAME | wait | done | fail. Ctrl-D ends."""
    from phonesim.phone import Phone
    task = _task(template_id, seed) if template_id else None
    ep = Episode(task) if task else None
    phone = ep.phone if ep else Phone()
    if task:
        click.echo(f"Task: {task.instruction}  (budget {task.step_budget})")
    _print_observation(phone, tree)
    for line in sys.stdin:
        if not line.strip():
            continue
        action = parse_short(line)
        if isinstance(action, str):
            click.echo(f"! {action}")
            continue
        result = ep.step(action) if ep else phone.step(action)
        click.echo(f"> {action.to_json()} -> {'ok' if result.ok else 'no-op: ' + str(result.reason)}")
        _print_observation(phone, tree)
        if ep and ep.done:
            break
    if ep:
        click.echo(json.dumps(ep.metrics().to_dict()))


@sim.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--instances", default=3000, show_default=True)
@click.option("--steps", default=300, show_default=True)
@click.option("--procs", default=2, show_default=True)
def bench(as_json: bool, instances: int, steps: int, procs: int) -> None:
    """Memory per phone, reset/fork latency, step/render cost, throughput."""
    from phonesim.bench import run
    result = run(instances, steps, procs)
    if as_json:
        click.echo(json.dumps(result))
    else:
        for k, v in result.items():
            click.echo(f"{k:32s} {v:.4g}" if isinstance(v, float) else f"{k:32s} {v}")


@sim.command("adb-server")
@click.option("--port", default=5037, show_default=True, help="TCP port on 127.0.0.1 (adb -P PORT).")
@click.option("--devices", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Phones served, as phonesim-1..N.")
@click.option("--size", default="1080x2400", show_default=True, callback=_size)
@click.option("--world-seed", default=0, show_default=True, help="Seed of the apps' world data.")
@click.option("--allow-kill", is_flag=True, help="Let `adb kill-server` (host:kill) stop this server.")
@click.option("--brands", "brands_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="YAML {app: {package, label}}: serve only these apps, under these packages and launcher labels "
                   "(a user's apps, as far as a client can tell).")
def adb_server(port: int, devices: int, size: tuple[int, int], world_seed: int, allow_kill: bool,
               brands_file: str | None) -> None:
    """Serve simulated phones as adb devices (adbutils and the adb client work against it)."""
    import yaml

    from phonesim.adb import AdbServer
    from phonesim.brands import branded_phone, brands_from
    try:
        brands = brands_from(yaml.safe_load(open(brands_file, encoding="utf-8"))) if brands_file else None
        if brands is not None:
            branded_phone(world_seed, size, brands)  # unknown apps fail here, before the port opens
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        server = AdbServer(devices=devices, size=size, world_seed=world_seed, port=port, allow_kill=allow_kill)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc}") from None
    for serial in server.serials() if brands else ():
        server.device(serial).phone = branded_phone(world_seed, size, brands)
    click.echo(f"serving {', '.join(server.serials())} on 127.0.0.1:{server.port} "
               f"(ANDROID_ADB_SERVER_PORT={server.port}); Ctrl-C stops")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.stop()
