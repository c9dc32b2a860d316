"""The password a person may give the web app instead of its token (`session-tree password`).

Kept as a salted scrypt hash (hashlib's, from the standard library: no dependency for one
function) in the config folder, 0600 in a 0700 folder; a file another account could write is
not read at all (it could put a hash of its own there). Read at every login, so a password set
or removed while a server runs counts at once."""

from __future__ import annotations

import base64
import hmac
import os
import secrets
from hashlib import scrypt
from pathlib import Path

import orjson

from .errors import SessionError
from .private import open_private, owned_alone, private_folder

# 16 MB and about 50 ms a check: a guess costs that much, a login does not notice it.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
MIN_LENGTH = 8


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/session-tree`, by default `~/.config/session-tree`."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "session-tree"


def password_path() -> Path:
    return config_dir() / "password.json"


def _digest(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return scrypt(password.encode("utf-8", "surrogatepass"), salt=salt, n=n, r=r, p=p, maxmem=2**26, dklen=32)


def set_password(password: str) -> Path:
    """Keep a hash of `password` (replacing any), written whole or not at all."""
    if len(password) < MIN_LENGTH:
        raise SessionError(f"the password has {len(password)} characters; at least {MIN_LENGTH}, please")
    salt = secrets.token_bytes(16)
    record = {"scheme": "scrypt", "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P,
              "salt": base64.b64encode(salt).decode(),
              "hash": base64.b64encode(_digest(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)).decode()}
    path = password_path()
    private_folder(path.parent, tighten=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "wb") as f:
            f.write(orjson.dumps(record))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SessionError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def remove_password() -> bool:
    """Forget the password; whether there was one."""
    try:
        password_path().unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise SessionError(f"cannot remove {password_path()}: {exc.strerror or exc}") from None
    return True


def password_problem() -> str | None:
    """Why the password file is not used, if there is one that cannot be (None: none, or a good one)."""
    path = password_path()
    if not path.exists():
        return None
    why = owned_alone(path) or owned_alone(path.parent, folder=True)
    if why:
        return f"{path} is not used: {why}"
    try:
        _record()
    except (OSError, ValueError, KeyError, TypeError):
        return f"{path} is not used: it is not a password file of this app (set one again: session-tree password)"
    return None


def _record() -> dict:
    got = orjson.loads(password_path().read_bytes())
    if got["scheme"] != "scrypt":
        raise ValueError(got["scheme"])
    return {"salt": base64.b64decode(got["salt"]), "hash": base64.b64decode(got["hash"]),
            "n": int(got["n"]), "r": int(got["r"]), "p": int(got["p"])}


def check_password(password: str) -> bool:
    """Whether `password` is the one set (False when none is set, or its file is not usable)."""
    if not password or not password_path().exists() or password_problem() is not None:
        return False
    try:
        r = _record()
        return hmac.compare_digest(_digest(password, r["salt"], r["n"], r["r"], r["p"]), r["hash"])
    except (OSError, ValueError, KeyError, TypeError, MemoryError):
        return False
