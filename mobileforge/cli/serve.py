"""`mobileforge serve CHECKPOINT`: an OpenAI-compatible chat-completions server for a local
checkpoint, so the endpoint path (litellm) runs against it as against a vLLM server."""

from __future__ import annotations

import signal
import threading

import click


@click.command()
@click.argument("checkpoint", type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port (0 picks a free one; the URL is printed).")
@click.option("--model-name", default=None, help="Model id the server reports; default the directory name.")
@click.option("--device", default="cpu", show_default=True, help="torch device, e.g. cuda:0.")
@click.option("--batch-size", default=16, show_default=True, type=click.IntRange(1),
              help="Requests answered by one generate call at most.")
@click.option("--max-new-tokens", default=128, show_default=True, type=click.IntRange(1),
              help="Default max_tokens of a request that names none.")
def serve(checkpoint: str, host: str, port: int, model_name: str | None, device: str, batch_size: int,
          max_new_tokens: int) -> None:
    """Serve CHECKPOINT (a transformers model directory with its processor) until interrupted.

    With vLLM installed and a GPU, `vllm serve CHECKPOINT` serves the same API faster."""
    from training.inference.server import ChatServer

    server = ChatServer(checkpoint, model_name=model_name, host=host, port=port, device=device,
                        batch_size=batch_size, max_new_tokens=max_new_tokens).start()
    click.echo(f"serving {server.model_name} at {server.base_url} (litellm model 'openai/{server.model_name}')",
               err=False)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
