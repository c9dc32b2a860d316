"""The redactor's context rules and its reading of a session: each form a password takes in
shell, `.env`, YAML, JSON, code, options, headers, URLs and prose is found whatever its
characters; code that only names a secret is not; a value hidden by escapes, invisible
characters, a split between text blocks, a JSON key, a structural field, a file name or 1,000
levels of nesting is found and cut out of the copy."""

from __future__ import annotations

import json

import orjson
import pytest

from tests.conftest import Builder
from webapp.core.redact import Choice, Replacer, redacted, scan_session
from webapp.core.redact_rules import context_hits, secret_name
from webapp.core.redact_walk import DecodedView, dumps

FOUND = [  # (text, the value that must be found)
    ("DB_PASSWORD=Qz7;mrv!Tk2w", "Qz7;mrv!Tk2w"),
    ("ADMIN_PASSWORD=Plum tree 9 Vqx", "Plum tree 9 Vqx"),
    ("SMTP_PASSWORD=Kx4(pLm8wQ", "Kx4(pLm8wQ"),
    ("REDIS_PASSWORD=$Vb7kLq2pWz", "$Vb7kLq2pWz"),
    ("MAIL_PASSWORD=Jn5`tRw3Hs", "Jn5`tRw3Hs"),
    ('DB_PASS="velvet Moon 47 orbit"', "velvet Moon 47 orbit"),
    ("database:\n  password: Tr4(ce)Qwn\n", "Tr4(ce)Qwn"),
    ('{"password":"Gh2;Lp9xVm"}', "Gh2;Lp9xVm"),
    ("export API_SECRET='$9fRq!mZ2wLx'", "$9fRq!mZ2wLx"),
    ("PASSWORD=Lk8sWq2Bzr  # the old one", "Lk8sWq2Bzr"),
    ('password = "Zx9 Cv8;Bn7m"', "Zx9 Cv8;Bn7m"),
    ("ENV DB_PASSWORD=Pw4;Docker9", "Pw4;Docker9"),
    ("mysql -u root --password='Wq3 Ty7(Ln' app", "Wq3 Ty7(Ln"),
    ("gh auth login --with-token ghx7Lq2Mz9", "ghx7Lq2Mz9"),
    ("curl -u admin:Hp4;Zr8xQ https://ci.example.com", "Hp4;Zr8xQ"),
    ("curl -H 'Authorization: Bearer Xy8Kd2Lm5Np9Qr3St6' https://x", "Xy8Kd2Lm5Np9Qr3St6"),
    ('headers = {"X-Api-Key": "k3y-Vq8Lm2Nx7Pw4"}', "k3y-Vq8Lm2Nx7Pw4"),
    ("psql postgres://app:Rt6;Yu(Io@db.internal:5432/app", "Rt6;Yu(Io"),
    ("redis://default:p@ss:W0rd7x@cache.internal:6379", "p@ss:W0rd7x"),
    ('"mysql://root:my pass 55x@db/app"', "my pass 55x"),
    ("https://hooks.example.com/cb?state=1&access_token=Mq7Xw2Lp9Rt4Vn&x=1", "Mq7Xw2Lp9Rt4Vn"),
    ("My password is Tr0ub4dor&3x, do not share.", "Tr0ub4dor&3x"),
    ("the aws secret 7d0JhTB0i65jxWWoI+R3A2l2GflPodRlQVtOVGD4 is in the vault", "7d0JhTB0i65jxWWoI+R3A2l2GflPodRlQVtOVGD4"),
    ("key: sk-ant-api03-7FBhzIN-klDag3H4Cl-g73BK1Nk_oy9mL62OmqdcYjn6Zd363S0vaO7Isma6rMq9vU0T1G1v84NDAmAA",
     "sk-ant-api03-7FBhzIN-klDag3H4Cl-g73BK1Nk_oy9mL62OmqdcYjn6Zd363S0vaO7Isma6rMq9vU0T1G1v84NDAmAA"),
    ("openai sk-proj-P2p8P69UA8FRzR7wfH4whsYMYsvNdzguxx2uIjYPjlbUR4vImmUF6hYdrCFF7Cyg4-5Vcv4tGxMp-zU5 ok",
     "sk-proj-P2p8P69UA8FRzR7wfH4whsYMYsvNdzguxx2uIjYPjlbUR4vImmUF6hYdrCFF7Cyg4-5Vcv4tGxMp-zU5"),
    ("token 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",
     "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"),
    ("stripe sk_live_51b9QgSgmEH66PPrGdH8fqgsLPgWBkYWmL8dV8RxWhfdlwuxYOL5hnZP3yxAjhYWu2OFVTMcHXLEi1pJ",
     "sk_live_51b9QgSgmEH66PPrGdH8fqgsLPgWBkYWmL8dV8RxWhfdlwuxYOL5hnZP3yxAjhYWu2OFVTMcHXLEi1pJ"),
    ("$ tail -n 2 key\nOELmQ3BwtM+J9BDnsZ9WrzGDGi/dsdjmoaU/SrJcEcTSsniks3/tJq3FRRCRdBGr\n"
     "oP0ma2y7rWREBeP1A6T83jf6Apfo3V2z2qrolwVxaB+6MJsKYaGCpz21bGaMM1Hn\n",
     "OELmQ3BwtM+J9BDnsZ9WrzGDGi/dsdjmoaU/SrJcEcTSsniks3/tJq3FRRCRdBGr\n"
     "oP0ma2y7rWREBeP1A6T83jf6Apfo3V2z2qrolwVxaB+6MJsKYaGCpz21bGaMM1Hn"),
]
NOT_SECRETS = [  # code and output that name a secret without holding one
    "const apiKey = await getApiKeyForModel(currentModel);",
    "\tapiKey?: string;",
    "password: str = None",
    "  token: Optional[str] = None",
    "  password=os.environ['DB_PASSWORD'],",
    'password = os.getenv("DB_PASSWORD")',
    "result.apiKey = args[++i];",
    "const hasApiKey = restoredModel ? !!(await getApiKeyForModel(restoredModel)) : false;",
    "const apiKey = parsed.apiKey || (await getApiKeyForModel(initialModel));",
    "  apiKey: async () => {",
    "token_type: bearer",
    "max_tokens: 4096",
    "secretName: db-credentials",
    "password_file: /run/secrets/db",
    "PWD=/home/ana/projects/app",
    "let pwd = process.cwd();",
    "the token is invalid",
    "DB_PASSWORD=${DB_PASSWORD}",
    "export GITHUB_TOKEN=$GITHUB_TOKEN",
    "API_KEY=<your key here>",
    "password: ********",
    "pwd = `${start}...${end}`;",
    "commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
    "request id 123e4567-e89b-12d3-a456-426614174000 finished",
    "see src/components/HeaderNavigationBarAbc1/Index for the layout",
    "http://localhost:8080/api/v1/items?page=2&sort=name",
]


@pytest.mark.parametrize("text,value", FOUND, ids=[t[:30] for t, _ in FOUND])
def test_each_form_of_a_secret_is_found_whatever_its_characters(text, value):
    assert value in {v for v, _ in context_hits(text)}


@pytest.mark.parametrize("text", NOT_SECRETS, ids=[t[:30] for t in NOT_SECRETS])
def test_code_that_names_a_secret_without_holding_one_is_left_alone(text):
    assert context_hits(text) == []


def test_names_that_say_secret():
    for name in ("DB_PASSWORD", "apiKey", "OPENAI_API_KEY", "x-api-key", "access_token", "client_secret", "GITHUB_PAT", "smtp_pass"):
        assert secret_name(name), name
    for name in ("max_tokens", "token_type", "secretName", "cache_key", "primary_key", "public_key", "pwd", "passed", "tokenizer"):
        assert not secret_name(name), name


def test_the_decoded_view_maps_a_hit_back_to_the_characters_written():
    raw = 'token \\u0067hp_AB\ufeffCD and \\n more'
    view = DecodedView(raw)
    assert view.text == "token ghp_ABCD and \n more"
    at = view.text.index("ghp_")
    assert view.raw_span(at, at + 8) == "\\u0067hp_AB\ufeffCD"


def test_a_document_deeper_than_orjson_writes_is_written_the_same():
    deep: object = {"k": ["v", 1, None, True, 2.5]}
    for _ in range(600):
        deep = [deep]
    assert dumps(deep) == json.dumps(deep, separators=(",", ":")).encode()


def _write(path, lines):
    path.write_bytes(b"".join((x if isinstance(x, bytes) else orjson.dumps(x)) + b"\n" for x in lines))
    return path


def test_a_secret_split_between_two_text_blocks_is_cut_from_both(tmp_path):
    token = "ghp_SpLitAcr0ssTwoBlocksXk9Qm2Vr7Lp4Ws8"
    b = Builder()
    b.user("hi")
    b.add("message", message={"role": "assistant", "provider": "p", "model": "m", "stopReason": "stop", "content": [
        {"type": "text", "text": f"The token is {token[:10]}"}, {"type": "text", "text": f"{token[10:]}, keep it."}]})
    path = b.write(tmp_path / "s.jsonl")
    with redacted(path, Choice()) as (copy, review):
        data = copy.read_text()
        finding = next(f for f in review.findings if f.value == token)
        assert "split across text blocks" in finding.places[0]
        content = orjson.loads(copy.read_bytes().splitlines()[-1])["message"]["content"]
        assert [c["text"] for c in content] == [f"The token is {finding.tag}", ", keep it."]
        assert token[:10] not in data and token[10:] not in data


def test_a_secret_split_across_claude_code_lines_of_one_message_is_cut(tmp_path):
    token = "ghp_SpLitAcr0ssClaudeLinesXk9Qm2Vr7Lp4Ws"
    base = {"type": "assistant", "sessionId": "s1", "cwd": "/tmp", "version": "2.1.0", "isSidechain": False}
    msg = {"id": "msg_1", "role": "assistant", "model": "claude", "type": "message"}
    path = _write(tmp_path / "c.jsonl", [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s1", "message": {"role": "user", "content": "hi"}},
        {**base, "uuid": "a1", "parentUuid": "u1", "message": {**msg, "content": [{"type": "text", "text": f"It is {token[:10]}"}]}},
        {**base, "uuid": "a2", "parentUuid": "a1", "message": {**msg, "content": [{"type": "text", "text": token[10:]}]}},
    ])
    with redacted(path, Choice()) as (copy, _):
        data = copy.read_text()
        assert token[:10] not in data and token[10:] not in data and "[REDACTED:github-token#1]" in data


def test_json_keys_structural_fields_a_bom_with_escapes_and_deep_nesting(tmp_path):
    b = Builder()
    escaped = "".join(f"\\u{ord(c):04x}" for c in "ghp_5LnFBHekLnMYLafDNthm1pDDgEO83vN7Ds2I")
    b.lines[0] = b"\xef\xbb\xbf" + b.lines[0][:-1] + f', "note": "{escaped}"}}'.encode()
    b.user("see the map", details={"ghp_Muhq9ujYGR1H4gA4d10uUWvoVjtkHtS0sDYk": 1},
           requestId="sk_live_51StructuralRequestIdQgSgmEH66PPrGdH8fqgs")
    b.assistant("", calls=[{"id": "c1", "name": "echo", "arguments": {"x": "DEEP"}}])
    b.lines[-1] = b.lines[-1].replace(b'"DEEP"', ("[" * 1000 + '{"token": "glpat-NeStEd1000DeepXk9QmZ"}' + "]" * 1000).encode())
    b.tool_result("c1", "ok", name="echo")
    path = b.write(tmp_path / "s.jsonl")
    review = scan_session(path)
    values = {f.value for f in review.findings}
    assert {"ghp_5LnFBHekLnMYLafDNthm1pDDgEO83vN7Ds2I", "ghp_Muhq9ujYGR1H4gA4d10uUWvoVjtkHtS0sDYk",
            "sk_live_51StructuralRequestIdQgSgmEH66PPrGdH8fqgs", "glpat-NeStEd1000DeepXk9QmZ"} <= values
    assert not any(f.value.startswith(("e", "0193")) and f.rule.endswith("entropy") for f in review.findings)  # ids and times stay
    with redacted(path, Choice()) as (copy, _):
        data = copy.read_bytes()
        assert data.startswith(b"\xef\xbb\xbf")  # the BOM stays where the reader expects it
        for value in values:
            assert value.encode() not in data
        assert data.count(b"[" * 1000) == 1 and b'"parentId"' in data  # the deep line is written whole, the tree intact


def test_the_file_name_is_scanned_and_the_copy_is_named_without_it(tmp_path):
    path = Builder().write(tmp_path / "deploy-ghp_FiLeNaMe0123456789abcdefghijKLMNOPQRST.jsonl")
    with redacted(path, Choice()) as (copy, review):
        assert review.findings[0].places == ["file name"]
        assert copy.name == "deploy-[REDACTED:github-token#1].jsonl" and copy.read_bytes() == path.read_bytes()


def test_a_value_too_short_to_replace_safely_is_not_taken():
    # the library's URL rule stops at a password's `@`: its one-letter reading would replace every "p"
    review_values = {v for v, _ in context_hits("redis://default:p@ss:W0rd7x@cache.internal:6379")}
    assert review_values == {"p@ss:W0rd7x"}


def test_the_replacer_writes_a_line_that_is_no_json_with_its_strings_decoded(tmp_path):
    from webapp.core.redact import Review, Finding

    replace = Replacer(Review([Finding("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github-token", "[T#1]")], []))
    broken = b'{"text": "x \\u0067hp_abcdefghijklmnopqrstuvwxyz0123456789", "cut'
    assert replace.line(broken) == b'{"text": "x [T#1]", "cut'
