"""session-tree: see, fork, compact and compare LLM agent sessions stored as trees."""


def create_app(*args, **kwargs):
    """The Flask app factory, for `flask --app webapp run`; Flask is imported only here."""
    from .web.app import create_app as factory

    return factory(*args, **kwargs)
