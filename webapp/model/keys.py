"""Whether a model can be called at all, said before litellm is imported (that import takes 5-9 s
on a cold machine, far too long to learn that a key is missing).

One table: the providers whose key litellm reads from known environment variables (its own
`validate_environment` names the same ones) and nothing else. A provider not in it (Azure,
Bedrock, Vertex, a bare model name litellm resolves itself...) is not checked here: it may
authenticate in other ways (an AWS profile, a cloud login), and litellm says what is wrong when
the call is made. A model behind --api-base is not checked either: a local server may need no key.
"""

from __future__ import annotations

import os

# provider prefix of a litellm model string -> the environment variables litellm reads its key from
PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "cohere": ("COHERE_API_KEY",),
}
OWN_KEY = "SESSION_TREE_API_KEY"


def missing_key(model: str | None, api_base: str | None, api_key: str | None) -> str | None:
    """Why `model` cannot be called for want of a key (a sentence naming the variable to set), or
    None when it has one, needs none, or its provider is not one whose key is known here."""
    provider, sep, _ = (model or "").partition("/")
    names = PROVIDER_KEYS.get(provider) if sep else None
    if not names or api_base or api_key or any(os.environ.get(n, "").strip() for n in names):
        return None
    others = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
    return f"No API key for {model}. Set {names[0]}{others} or {OWN_KEY}."
