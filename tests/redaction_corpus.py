"""A corpus of planted secrets for the redaction tests: every form a red-team round leaked (the
ten password forms, JSON keys and structural fields, a BOM with `\\u` escapes, a secret split
across two text blocks, a private key's body without its header, an AWS secret key in prose,
the session's file name) and the usual provider tokens, spread over sessions of pi's and Claude
Code's formats, a sub-agent file, a line nested 1,000 deep, and file and folder names.

`PLANTED` maps each planted secret's name to the exact value that must never reach a shared
file; `write_corpus` writes the sessions; `leaked` says which values a shared file still holds,
however the file encodes its text (HTML entities, JSON escapes, `\\u003c`, invisible characters).
All values are made up (random characters in the providers' shapes).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import orjson

from tests.conftest import Builder

KEY_BODY = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCGHvmY3d7MmwhBDeOeDtUyWijHTu27pTW\n"
    "CgqTe9feCFHkwLWcxtale/YD0UNsy/l0kPnvyxUI84d8Z6UyGnOkcstQ3AzgkJN1\n"
    "SE9+2xKTeHqYIrJtJDdXctzTb7gSNPM96h/O4sCBT3qzflsZT0KmavdyYC+zhGb+\n"
    "AIcO0JnJWAh2uIG2sPufzWz1+8wk6Te3irJAq9bnG15VqVBHroCGPpIL7xulVWiu"
)
HEADERLESS_BODY = (
    "OELmQ3BwtM+J9BDnsZ9WrzGDGi/dsdjmoaU/SrJcEcTSsniks3/tJq3FRRCRdBGr\n"
    "oP0ma2y7rWREBeP1A6T83jf6Apfo3V2z2qrolwVxaB+6MJsKYaGCpz21bGaMM1Hn\n"
    "Gu8UC5PP7atzFj+4TeiUvguAFenJE5RblAmUnT4qkjTBkJrvjvFllQtgQJq3sZ2S\n"
    "g6m6q9BAHgO61AM72vxRr5LE1kMxvOiRLW90Q/EV+bh1VO2r/4FB+6d9WStF"
)
PLANTED = {
    # the ten password forms of an assignment
    "env-semicolon": "Qz7;mrv!Tk2w",
    "env-space": "Plum tree 9 Vqx",
    "env-paren": "Kx4(pLm8wQ",
    "env-dollar": "$Vb7kLq2pWz",
    "env-backtick": "Jn5`tRw3Hs",
    "env-quoted-spaces": "velvet Moon 47 orbit",
    "yaml-parens": "Tr4(ce)Qwn",
    "json-semicolon": "Gh2;Lp9xVm",
    "export-single-quoted-dollar": "$9fRq!mZ2wLx",
    "env-plain": "Lk8sWq2Bzr",
    # more assignments
    "python-quoted": "Zx9 Cv8;Bn7m",
    "flag-password": "Wq3 Ty7(Ln",
    "curl-user": "Hp4;Zr8xQ",
    "prose-password": "Tr0ub4dor&3x",
    "tool-argument-password": "Fe5;Gb8(Rt",
    "docker-auth": "ZGVwbG95OmkwRXNOV0IzeklzbFdR",
    "hex-secret-key": "5cacace4ea82ef6c138e1dc0046dd5a9",
    # URLs and headers
    "url-password-symbols": "Rt6;Yu(Io",
    "url-password-at": "p@ss:W0rd7x",
    "url-query-token": "Mq7Xw2Lp9Rt4Vn",
    "url-quoted-space": "my pass 55x",
    "bearer": "Xy8Kd2Lm5Np9Qr3St6",
    "basic-auth-header": "YWRtaW46c2VjcmV0UGFzczk=",
    "x-api-key": "k3y-Vq8Lm2Nx7Pw4",
    # providers' tokens
    "github-classic": "ghp_DL4HcpsQ9OQniWwr4VC0bH5VidPmNTD29dlY",
    "github-fine-grained": "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",
    "gitlab": "glpat-HqLEqOT7IbH7nLcKxsUW",
    "slack-user": "xoxp-109889040412-2990053596702-sb4gp24q4o2yv924bm1xjz1d8naak8uh",
    "slack-webhook": "https://hooks.slack.com/services/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",
    "openai-legacy-marker": "sk-proj-pDWzHMhtOFNEpEjMtFDWwAZoKdheIahfmSOPFt61TpKzlSEmT3BlbkFJEAYteSakhB9T0Sx9EARKmvuKW387yig7RBf3rbdVOxXniLU6",
    "openai-project": "sk-proj-P2p8P69UA8FRzR7wfH4whsYMYsvNdzguxx2uIjYPjlbUR4vImmUF6hYdrCFF7Cyg4-5Vcv4tGxMp-zU5",
    "anthropic": "sk-ant-api03-7FBhzIN-klDag3H4Cl-g73BK1Nk_oy9mL62OmqdcYjn6Zd363S0vaO7Isma6rMq9vU0T1G1v84NDAmP2Eu0D_XYwFsOyOAA",
    "stripe-live": "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",
    "stripe-restricted": "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",
    "stripe-webhook": "whsec_32R7cfGouU2brjqPQzd5OhEmjJT4cmvR",
    "aws-access-key": "AKIAPYBWLZRUOKT56ARV",
    "aws-secret-assigned": "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",
    "aws-secret-in-prose": "7d0JhTB0i65jxWWoI+R3A2l2GflPodRlQVtOVGD4",
    "google-api-key": "AIzasbcsn47MhYwdinFhcodX4DBzpV3ANfLIbHZ",
    "google-oauth": "ya29.PtqAv3WIPbKRRlZXq7nCHdPV6H10TmbxhSf-1aWb2HdwJUTV-dMIrNFO9_lC",
    "huggingface": "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",
    "npm": "npm_N6KxKfwJy4pWfimmKzTjQQoj96C8OqSth2vx",
    "pypi": "pypi-AgEIcHlwaS5vcmcTAaYOH88GsBgqq0HQRIEYd_3TDHwbtryC2FOHoAjTpJTsTN6cuJjy8ebGed7",
    "sendgrid": "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",
    "twilio": "SK0c8e4ed114fd535c2e8afd340df2f792",
    "digitalocean": "dop_v1_d631e2d44722d36498b90c873ab8f91a4b38c5f0b407a6c09411502c02736032",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXBsb3ktYm90IiwiaWF0IjoxNzAwMDAwMDAwfQ.kTM7U2LnfjVt9C2tEJP8Zp4wsvWeQqNVAjxAhv1VDDc",
    "high-entropy-prose": "t5y0ckHU3oQ4HDd6nJXrtCmlX2MMtRg4JvCKCwdQC",
    # keys
    "private-key-pem": "-----BEGIN PRIVATE KEY-----\n" + KEY_BODY + "\n-----END PRIVATE KEY-----",
    "private-key-body-without-header": HEADERLESS_BODY,
    "private-key-in-json-config": "MIIEpAIBAAKCAQEAx8Wq2Lm5Np9Qr3St6Vb7kLq2pWzTr4ceQwnGh2Lp9xVmZx9Cv8Bn7mWq3Ty7LnHp4Zr8xQTr0ub4dor3x",
    # structure
    "json-key-token": "ghp_Muhq9ujYGR1H4gA4d10uUWvoVjtkHtS0sDYk",
    "structural-request-id": "sk_live_51StructuralRequestIdQgSgmEH66PPrGdH8fqgsLPgWBkYWmL8dV8RxWhfdl",
    "structural-message-id": "glpat-HaYqXbyDSgzmPBbyDTiE",
    "bom-and-escape": "ghp_5LnFBHekLnMYLafDNthm1pDDgEO83vN7Ds2I",
    "escaped-in-tool-output": "sk-proj-Esc4pedInT00lOutputAbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "zero-width-inside": "xoxb-220987654321-3301234567890-ZeroWidthInsideAbCdEfGhIj",
    "split-across-blocks": "sk-ant-api03-SpLiTaCrOsStWoBlOcKsXk9Qm2Vr7Lp4Ws8Zt1Nb6Hc3Jd5Fg0Ky-Rq7Ue2Wi9Oa4Ms6Tb1Yc8Pd3Lf5Gh0Jk2NvAA",
    "split-across-claude-lines": "ghp_SpLitAcr0ssClaudeLinesXk9Qm2Vr7Lp4Ws",
    "nested-1000-deep": "glpat-NeStEd1000DeepXk9QmZ",
    "sub-agent-file": "hf_SubAgentFileKfqdFaWlilibSXaVKBpCFcMO",
    "session-name": "AKIAZSESSIONNAME7Q2X",
    "label": "whsec_LabelFieldR7cfGouU2brjqPQzd5OhEm",
    "compaction-summary": "sk_live_51CompactionSummaryQgSgmEH66PPrGdH8fqgsLPgWBkYWmL8d",
    # Codex: a shell's output is JSON held as text (its lines joined by `\n` escapes), a message's text in blocks
    "codex-output-env": "Cx5;Vb8 nmQ",
    "codex-split-output-text": "glpat-CoDeXsPlItOuTpUtTeXtZ9",
    # names
    "file-name": "ghp_FiLeNaMe0123456789abcdefghijKLMNOPQRST",
    "folder-name": "glpat-FoLdErNaMeXk9Qm2VrZ7",
}
# Values whose parts must not reach a file either (the halves of a split secret).
SPLIT_AT = {"split-across-blocks": 16, "split-across-claude-lines": 10, "codex-split-output-text": 9}
ORDINARY = (  # what redaction should leave alone, in the same sessions
    "commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
    "request id 123e4567-e89b-12d3-a456-426614174000 finished",
    "max_tokens: 4096",
    "const apiKey = await getApiKeyForModel(currentModel);",
)

P = PLANTED
ENV_DUMP = f"""$ cat .env
DB_PASSWORD={P['env-semicolon']}
ADMIN_PASSWORD={P['env-space']}
SMTP_PASSWORD={P['env-paren']}
REDIS_PASSWORD={P['env-dollar']}
MAIL_PASSWORD={P['env-backtick']}
DB_PASS="{P['env-quoted-spaces']}"
export API_SECRET='{P['export-single-quoted-dollar']}'
PASSWORD={P['env-plain']}
SECRET_KEY={P['hex-secret-key']}
AWS_ACCESS_KEY_ID={P['aws-access-key']}
AWS_SECRET_ACCESS_KEY={P['aws-secret-assigned']}
GOOGLE_API_KEY={P['google-api-key']}
DEBUG=true
"""
CONFIG_YAML = f"""$ cat config.yml
database:
  host: db.internal
  password: {P['yaml-parens']}
  pool: 5
"""
JSON_DUMP = ('$ cat credentials.json\n{"user":"deploy","password":"' + P["json-semicolon"] + '",'
             '"type":"service_account","private_key":"-----BEGIN RSA PRIVATE KEY-----\\n' + P["private-key-in-json-config"]
             + '\\n-----END RSA PRIVATE KEY-----\\n"}')
CODE = f'''import psycopg
password = "{P['python-quoted']}"
conn = psycopg.connect(host="db", password=password)
'''
COMMANDS = (
    f"mysql -u root --password='{P['flag-password']}' app\n"
    f"curl -u admin:{P['curl-user']} https://ci.example.com/api\n"
    f"curl -H 'Authorization: Bearer {P['bearer']}' -H 'X-Api-Key: {P['x-api-key']}' https://api.example.com\n"
    f"curl -H \"Authorization: Basic {P['basic-auth-header']}\" https://registry.example.com\n"
    f"psql postgres://app:{P['url-password-symbols']}@db.internal:5432/app\n"
    f"redis-cli -u redis://default:{P['url-password-at']}@cache.internal:6379\n"
    f"open https://hooks.example.com/cb?state=1&access_token={P['url-query-token']}&x=1\n"
)
PROSE = (
    f"My password is {P['prose-password']} and the aws secret {P['aws-secret-in-prose']} is in the vault; "
    f"a random token {P['high-entropy-prose']} too. The db url is \"mysql://root:{P['url-quoted-space']}@db/app\"."
)
TOKENS = "\n".join(P[k] for k in (
    "github-classic", "github-fine-grained", "gitlab", "slack-user", "slack-webhook", "openai-legacy-marker",
    "openai-project", "anthropic", "stripe-live", "stripe-restricted", "stripe-webhook", "google-oauth", "huggingface",
    "npm", "pypi", "sendgrid", "twilio", "digitalocean", "jwt"))


def _escaped(value: str) -> str:
    """`value` with each letter written as a `\\u` escape, as a tool printing JSON may write it."""
    return "".join(f"\\u{ord(c):04x}" if c.isalpha() else c for c in value)


def write_corpus(root: Path) -> dict[str, Path]:
    """The corpus's sessions under `root`, as an agent's folders hold them: name -> path."""
    pi_dir = root / "--home-ana-projects-deploy--"
    claude_dir = root / "-home-ana-projects-deploy"
    named_dir = root / f"proj-{P['folder-name']}"
    for d in (pi_dir, claude_dir, named_dir):
        d.mkdir(parents=True, exist_ok=True)
    out = {
        "pi": _pi_session(pi_dir / "2025-06-01T10-00-00-000Z_planted.jsonl"),
        "pi-structure": _pi_structure(pi_dir / "2025-06-02T10-00-00-000Z_structure.jsonl"),
        "claude": _claude_session(claude_dir / "5f1c2a9e-7b3d-4e8a-9c0f-1a2b3c4d5e6f.jsonl"),
        "named": _named_session(named_dir / f"deploy-{P['file-name']}.jsonl"),
        "codex": _codex_session(root / "codex" / "rollout-2025-09-20T08-15-00-0199a3c2-7d10-7b31-9e55-2f0c1d4e8a01.jsonl"),
    }
    return out


def _pi_session(path: Path) -> Path:
    b = Builder()
    u1 = b.user(f"Deploy please. {PROSE}")
    a1 = b.assistant("Reading the settings.", calls=[{"id": "c1", "name": "bash", "arguments": {"command": "cat .env config.yml"}}])
    b.tool_result("c1", ENV_DUMP + CONFIG_YAML, name="bash")
    b.assistant("", calls=[{"id": "c2", "name": "bash", "arguments": {"command": COMMANDS}}])
    b.tool_result("c2", JSON_DUMP + "\n" + TOKENS, name="bash")
    b.assistant("", calls=[{"id": "c3", "name": "write", "arguments": {"path": "db.py", "content": CODE,
                                                                       "password": P["tool-argument-password"]}}])
    b.tool_result("c3", "wrote db.py\n" + "\n".join(ORDINARY), name="write")
    b.assistant("", calls=[{"id": "c4", "name": "write", "arguments": {"path": "id_rsa", "content": P["private-key-pem"]}}])
    b.tool_result("c4", f"$ tail -n 4 old_key\n{P['private-key-body-without-header']}\n", name="bash")
    b.tool_result("c4", '$ cat ~/.docker/config.json\n{"auths": {"ghcr.io": {"auth": "' + P["docker-auth"] + '"}}}', name="bash")
    b.tool_result("c4", '$ cat out.json\n{"api_key": "' + _escaped(P["escaped-in-tool-output"]) + '"}', name="bash")
    zw = P["zero-width-inside"]
    b.user(f"and this one: {zw[:20]}\u200b{zw[20:]}")
    a3 = b.assistant("Done.")
    b.add("compaction", summary=f"The user deployed with {P['compaction-summary']}.", firstKeptEntryId=u1,
          tokensBefore=1000, tokensAfter=100)
    b.add("label", targetId=a3, label=f"key {P['label']}")
    b.add("session_info", name=f"Deploy {P['session-name']}")
    side = b.user("another way", parent=a1)
    b.assistant("ok", parent=side)
    b.add("leaf", targetId=a3)
    return b.write(path)


def _pi_structure(path: Path) -> Path:
    """JSON keys and structural fields, a BOM with escapes, a split secret, deep nesting."""
    b = Builder()
    bom_header = orjson.loads(b.lines[0])
    bom_header["cwd"] = "/srv/app"
    line = json.dumps(bom_header)[:-1] + ', "note": "token ' + _escaped(P["bom-and-escape"]) + '"}'
    b.lines[0] = b"\xef\xbb\xbf" + line.encode()
    b.user("Check the token map")
    b.add("message", message={"role": "assistant", "content": [{"type": "text", "text": "Tokens by name:"}],
                              "provider": "p1", "model": "m1", "stopReason": "stop"},
          details={P["json-key-token"]: "github"}, requestId=P["structural-request-id"])
    split = P["split-across-blocks"]
    at = SPLIT_AT["split-across-blocks"]
    b.add("message", message={"role": "assistant", "provider": "p1", "model": "m1", "stopReason": "stop", "content": [
        {"type": "text", "text": f"The key is {split[:at]}"}, {"type": "text", "text": f"{split[at:]} (keep it safe)."}]})
    deep = "[" * 1000 + json.dumps({"token": P["nested-1000-deep"]}) + "]" * 1000  # (deeper than orjson writes)
    b.assistant("", calls=[{"id": "c9", "name": "echo", "arguments": {"payload": "DEEP"}}])
    b.lines[-1] = b.lines[-1].replace(b'"DEEP"', deep.encode())
    b.tool_result("c9", "echoed", name="echo")
    return b.write(path)


def _claude_session(path: Path) -> Path:
    sid = path.stem
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/ana/projects/deploy", "sessionId": sid, "version": "2.1.0"}
    split = P["split-across-claude-lines"]
    at = SPLIT_AT["split-across-claude-lines"]
    msg = {"id": "msg_split01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
           "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
    lines = [
        {**base, "type": "user", "timestamp": "2025-07-01T10:00:00.000Z", "parentUuid": None, "uuid": "u1",
         "message": {"role": "user", "content": [{"type": "text", "text": "What is the deploy token?"}]}},
        {**base, "type": "assistant", "timestamp": "2025-07-01T10:01:00.000Z", "parentUuid": "u1", "uuid": "a1",
         "requestId": "req_1", "message": {**msg, "content": [{"type": "text", "text": f"It is {split[:at]}"}]}},
        {**base, "type": "assistant", "timestamp": "2025-07-01T10:01:01.000Z", "parentUuid": "a1", "uuid": "a2",
         "requestId": "req_1", "message": {**msg, "content": [{"type": "text", "text": f"{split[at:]}, from the vault."}]}},
        {**base, "type": "assistant", "timestamp": "2025-07-01T10:02:00.000Z", "parentUuid": "a2", "uuid": "a3",
         "requestId": "req_2", "message": {**msg, "id": P["structural-message-id"], "stop_reason": "end_turn",
                                           "content": [{"type": "text", "text": "Done."}]}},
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    agent = path.with_suffix("") / "subagents" / "agent-a1b2c3.jsonl"
    agent.parent.mkdir(parents=True)
    agent_lines = [
        {**base, "isSidechain": True, "agentId": "a1b2c3", "type": "user", "timestamp": "2025-07-01T10:01:30.000Z",
         "parentUuid": None, "uuid": "s1", "message": {"role": "user", "content": f"use HF_TOKEN={P['sub-agent-file']}"}},
    ]
    agent.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in agent_lines))
    return path


def _codex_session(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    split, at = P["codex-split-output-text"], SPLIT_AT["codex-split-output-text"]
    output = json.dumps({"output": f"ok\nSMTP_PASS={P['codex-output-env']}\nDEBUG=1\n", "metadata": {"exit_code": 0}})
    lines = [
        {"timestamp": "2025-09-20T08:15:01.000Z", "type": "session_meta", "payload": {
            "id": "0199a3c2-7d10-7b31-9e55-2f0c1d4e8a01", "timestamp": "2025-09-20T08:15:00.000Z", "cwd": "/home/ana/proj",
            "originator": "codex_cli_rs", "cli_version": "0.36.0"}},
        {"timestamp": "2025-09-20T08:15:04.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Show the mail settings"}]}},
        {"timestamp": "2025-09-20T08:15:07.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": "call_Rk2x",
            "arguments": json.dumps({"command": ["bash", "-lc", "cat .env"], "workdir": "/home/ana/proj"})}},
        {"timestamp": "2025-09-20T08:15:08.000Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_Rk2x", "output": output}},
        {"timestamp": "2025-09-20T08:15:09.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": f"The token is {split[:at]}"}, {"type": "output_text", "text": f"{split[at:]}."}]}},
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


def _named_session(path: Path) -> Path:
    b = Builder()
    b.user("A session whose file name holds a token")
    b.assistant("Noted.")
    return b.write(path)


# --- Finding a planted value in a shared file -------------------------------------------------------

_INVISIBLE = re.compile("[\ufeff\u200b\u200c\u200d\u2060\u00ad]")
_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def _readings(text: str) -> list[str]:
    """The text as a reader may read it: as written, entities decoded, JSON escapes decoded,
    invisible characters dropped."""
    plain = html.unescape(text)
    readings = [text, plain]
    for _ in range(2):  # (a JSON string holding JSON text escapes twice)
        plain = _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), plain.replace("\\\\", "\\"))
        plain = plain.replace("\\/", "/").replace('\\"', '"').replace("\\n", "\n")
        readings += [plain, _INVISIBLE.sub("", plain)]
    return readings


def needles(name: str) -> list[str]:
    """What of the planted value `name` must not be read: the value (each line of a key body
    on its own, each half of a split secret)."""
    value = PLANTED[name]
    if "\n" in value:
        return [line for line in value.splitlines() if len(line) > 20]
    if name in SPLIT_AT:
        return [value, value[:SPLIT_AT[name]], value[SPLIT_AT[name]:]]
    return [value]


def leaked(data: bytes | str, names: list[str] | None = None) -> list[str]:
    """The planted values (of `names`, default all) that `data` still holds in any reading."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    readings = _readings(text)
    return [name for name in (names or PLANTED) if any(n in r for n in needles(name) for r in readings)]
