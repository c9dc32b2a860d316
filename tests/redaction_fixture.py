"""A session with planted secrets of many kinds in every field a session has, for the
redaction tests (`SECRETS`: kind -> the exact value that must never reach a shared file)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Builder

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGcYzQ9xUkcB7yPqK2m4hQ8s\n"
    "w8RkX1vZ0b7nqLxT3yJ9cP4eK6dHaU2oFvN5tWgM1rYbS7zE3iQ0pLkJ8hGfD2aC\n"
    "-----END RSA PRIVATE KEY-----"
)
SECRETS = {
    "aws-key": "AKIAQ3EGTXCVBN4RT7YZ",
    "aws-secret": "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",
    "github-token": "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",
    "slack-token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe-key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "openai-key": "sk-proj-Ab3dEf5hIj7lMn9pQr1tT3BlbkFJUv2xYz4bCd6fGh8jKl0n",
    "anthropic-key": "sk-ant-api03-Xk9Qm2Vr7Lp4Ws8Zt1Nb6Hc3Jd5Fg0Ky-Rq7Ue2Wi9Oa4Ms6Tb1Yc8Pd3Lf5Gh0Jk2Nv7Bx4Qz",
    "private-key": PRIVATE_KEY,
    "url-password": "s3cr3tP4ssw0rd",
    "env-password": "hunter2-Corr3ct-Horse",
    "env-secret-key": "Zq8xP3vN7mK2wL9r",
    "high-entropy": "Zq8xP3vN7mK2wL9rT4yB6cF1hJ5gD0sA8eU3iO7pQ",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "sendgrid-key": "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",
    "npm-token": "npm_Ab3dEf5hIj7lMn9pQr1tUv2xYz4bCd6fGh8j",
}
ENV_DUMP = (
    "$ cat .env\n"
    f"DATABASE_URL=postgres://admin:{SECRETS['url-password']}@db.internal:5432/app\n"
    f"DATABASE_PASSWORD={SECRETS['env-password']}\n"
    f"SECRET_KEY={SECRETS['env-secret-key']}\n"
    f"AWS_ACCESS_KEY_ID={SECRETS['aws-key']}\n"
    f'aws_secret_access_key = "{SECRETS["aws-secret"]}"\n'
    f"SENDGRID_API_KEY={SECRETS['sendgrid-key']}\n"
    "DEBUG=true\n"
)
# Ordinary text that looks random but is not secret: what the redaction should leave alone.
ORDINARY = (
    "commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c\n"
    "Author: Ana <ana@example.com>\n"
    "request id 123e4567-e89b-12d3-a456-426614174000 finished\n"
    "see src/webapp/core/session_reader_module.py"
)


def write_secret_session(path: Path) -> dict[str, str]:
    """The session, written to `path`; returns its entries' ids by role."""
    s = SECRETS
    b = Builder()
    u1 = b.user(f"Deploy with my key {s['anthropic-key']} and token {s['github-token']} please")
    a1 = b.assistant(f"Using stripe {s['stripe-key']}", calls=[{"id": "c1", "name": "bash", "arguments": {
        "command": f"curl -H 'Authorization: Bearer {s['jwt']}' https://api.example.com && export OPENAI_API_KEY={s['openai-key']}"}}])
    r1 = b.tool_result("c1", ENV_DUMP + ORDINARY, name="bash")
    a2 = b.assistant("", calls=[{"id": "c2", "name": "write", "arguments": {"path": "id_rsa", "content": s["private-key"]}}])
    r2 = b.tool_result("c2", f"wrote id_rsa; slack says {s['slack-token']}", name="write")
    b.add("compaction", summary=f"The user deployed with {s['github-token']}; the npm token {s['npm-token']} was set.",
          firstKeptEntryId=u1, tokensBefore=1000, tokensAfter=100)
    u2 = b.user(f"Random token: {s['high-entropy']}")
    a3 = b.assistant("Done", details={"debug": f"raw field with {s['aws-key']}"})
    side = b.user(f"another way, with {s['slack-token']}", parent=a1)
    b.add("branch_summary", fromId=a3, summary=f"Tried stripe {s['stripe-key']}", parent=side)
    b.add("label", targetId=a3, label=f"key {s['github-token']}")
    b.add("session_info", name=f"Deploy {s['stripe-key']}")
    b.add("leaf", targetId=a3)
    b.write(path)
    return dict(u1=u1, a1=a1, r1=r1, a2=a2, r2=r2, u2=u2, a3=a3, side=side)


def leaked(data: bytes) -> list[str]:
    """The planted secrets found in `data`, as they are or as JSON escapes them; each line of
    the private key is looked for on its own (a file may hold it re-wrapped)."""
    text = data.decode("utf-8", errors="replace")
    out = []
    for kind, value in SECRETS.items():
        parts = value.splitlines()[1:-1] if kind == "private-key" else [value]
        for part in parts:
            if part in text or part.replace("/", "\\/") in text:
                out.append(kind)
    return out
