"""The model layer: calls through litellm (`llm`), how they fail (`errors`), the model table of
context windows and prices (`table`) and the summaries a model or the extractive summarizer writes
(`summarize`). The core never imports it: a session can be read, drawn and audited without it."""
