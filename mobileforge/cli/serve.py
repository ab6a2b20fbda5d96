"""`mobileforge serve CHECKPOINT`: an OpenAI-compatible chat-completions server for a local
checkpoint, so the endpoint path (litellm) runs against it as against a vLLM server."""

from __future__ import annotations

import signal
import threading

import click

MiB = 1024 * 1024


@click.command()
@click.argument("checkpoint", type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port (0 picks a free one; the URL is printed).")
@click.option("--model-name", default=None, help="Model id the server reports; default the directory name.")
@click.option("--device", default="cpu", show_default=True, help="torch device, e.g. cuda:0.")
@click.option("--batch-size", default=16, show_default=True, type=click.IntRange(1, 1024),
              help="Requests answered by one generate call at most.")
@click.option("--max-new-tokens", default=128, show_default=True, type=click.IntRange(1, 4096),
              help="Default max_tokens of a request that names none.")
@click.option("--max-model-len", default=None, type=click.IntRange(16, 1 << 20),
              help="Context tokens (prompt + max_tokens) a request may use; default the model's own.")
@click.option("--max-body-mb", default=64, show_default=True, type=click.IntRange(1, 1024),
              help="Largest request body; larger ones are answered 413.")
@click.option("--queue-mb", default=256, show_default=True, type=click.IntRange(64, 1 << 16),
              help="Memory for checked requests waiting for generation; beyond it, requests wait to be read.")
def serve(checkpoint: str, host: str, port: int, model_name: str | None, device: str, batch_size: int,
          max_new_tokens: int, max_model_len: int | None, max_body_mb: int, queue_mb: int) -> None:
    """Serve CHECKPOINT (a transformers model directory with its processor) until interrupted.

    Every request is bounded (body, prompt tokens, images, pixels) and checked before any
    expensive work; the memory held for requests stays under the bound printed at start.
    With vLLM installed and a GPU, `vllm serve CHECKPOINT` serves the same API faster."""
    from training.inference.chat_request import ServeLimits
    from training.inference.server import ChatServer

    limits = ServeLimits(context_tokens=max_model_len, max_body_bytes=max_body_mb * MiB, queue_budget_bytes=queue_mb * MiB)
    server = ChatServer(checkpoint, model_name=model_name, host=host, port=port, device=device,
                        batch_size=batch_size, max_new_tokens=max_new_tokens, limits=limits).start()
    click.echo(f"serving {server.model_name} at {server.base_url} (litellm model 'openai/{server.model_name}'); "
               f"context {server.limits.context} tokens; memory for requests at most "
               f"{server.limits.memory_bound_bytes() / MiB:.0f} MiB above the idle process and one batch's generation")
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
