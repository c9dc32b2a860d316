"""session-tree: see, fork, compact and compare LLM agent sessions stored as trees."""


def create_app(*args, **kwargs):
    """The Flask app factory, for `flask --app webapp run`; Flask is imported only here. The app
    asks every request for its token ($SESSION_TREE_TOKEN, else a new one), said on stderr here
    since Flask prints the address (`serve` prints both in one)."""
    import sys

    from .web.app import create_app as factory
    from .web.auth import given_token, owner

    kwargs.setdefault("AUTH_TOKEN", given_token())
    app = factory(*args, **kwargs)
    print(f"session-tree: add ?token={owner(app).token} to the address Flask prints to log in", file=sys.stderr)
    return app
