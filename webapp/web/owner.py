"""What the person who started the server decided, which no form may change.

Running anything, and calling which model, is the owner's decision: a form is filled by whoever
reaches the page (or by another site's page that posts to it). So:
- a request may name only a model `serve --model` offered (given once or more; the first, or
  $SESSION_TREE_MODEL, is the default), always with the server's own API base and key: a model
  string from a form (`ollama_chat/x`) would otherwise send the key to a host of its choosing;
- sandbox tools run only when the server was started with `--allow-sandbox`, bash only with
  `--allow-bash`, and bash only where bubblewrap isolates it (`model/isolation.py`).
A request asking for more is refused (403) with the flag that would allow it.
"""

from __future__ import annotations

from dataclasses import replace

from flask import abort, current_app

from ..model.isolation import isolation
from ..model.llm import ModelConfig


def model_config() -> ModelConfig:
    """The server's model configuration (its default model, API base, key and timeout)."""
    return current_app.config["MODEL_CONFIG"]


def offered_models() -> list[str]:
    """The models a request may name, the default first."""
    listed = [model_config().model, *current_app.config.get("MODELS", ())]
    return list(dict.fromkeys(m for m in listed if m))


def refusal_for_model(picked: str) -> str | None:
    """Why a request may not name `picked`, or None when it may."""
    if picked in offered_models():
        return None
    offered = offered_models()
    if not offered:
        return (f"this server was started with no model, so it calls none ({picked} was asked for): "
                "start it with --model M")
    return (f"the model {picked} is not one this server offers ({', '.join(offered)}): a form may only pick "
            f"a model the server was started with (serve --model {picked} would offer it)")


def chosen_config(picked: str | None) -> ModelConfig:
    """The configuration for the model a form picked (the default when none): 403 for a model
    the server was not started with."""
    config = model_config()
    picked = (picked or "").strip()
    if not picked or picked == config.model:
        return config
    refusal = refusal_for_model(picked)
    if refusal:
        abort(403, description=refusal)
    return replace(config, model=picked)


def sandbox_allowed() -> bool:
    return bool(current_app.config.get("ALLOW_SANDBOX") or current_app.config.get("ALLOW_BASH"))


def bash_allowed() -> bool:
    return bool(current_app.config.get("ALLOW_BASH")) and isolation().available


def check_tools(tools: str, allow_bash: bool) -> None:
    """403 when a form asks for sandbox tools or bash the server was not started to allow."""
    if tools == "sandbox" and not sandbox_allowed():
        abort(403, description="sandbox tools are off on this server: they run only when it was started with "
                               "--allow-sandbox (a form cannot turn them on)")
    if allow_bash and not current_app.config.get("ALLOW_BASH"):
        abort(403, description="bash is off on this server: it runs only when the server was started with "
                               "--allow-bash (a form cannot turn it on)")
    if allow_bash and not isolation().available:
        abort(403, description=f"bash is refused: {isolation().describe()}")
