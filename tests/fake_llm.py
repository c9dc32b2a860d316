"""A local OpenAI-compatible server for tests: nothing that uses it touches the network.

`FakeLLM` runs `http.server.ThreadingHTTPServer` on 127.0.0.1 in a thread. A test picks what it
answers with `fake.behave(kind, **options)` (`pieces` and
`delay` make a streamed answer arrive slowly, piece by piece) and reads what it was sent in `fake.requests` (the
parsed JSON bodies), so it can check the exact messages of a call. `fake.per_model(name, kind,
**options)` makes one model name answer its own way (a slow one, a failing one) while the others
keep the server's behaviour: what asking several models at once is tested with. An `answer`
option (a function of the request body) makes the reply's text from what was asked; a `script`
option (a function of the request body returning `{"text": ..., "calls": [(name, arguments)]}`,
and `"usage"` when the reply reports its own) makes the whole reply, tool calls included: what a
model working through a replay is.

The server is strict the way OpenAI is: a request whose messages OpenAI would refuse (a tool call
without its result, a tool result without its call, an empty assistant message) gets OpenAI's
400 with OpenAI's wording, so every model test proves the request would be accepted. It is also
strict the way local servers are (llama.cpp's, llama-cpp-python's), which the real ones showed:
- an assistant message without `content` is refused (their chat templates read it);
- `fake.window` (tokens, counted as characters / 4) makes it a server of that window: a request
  larger than it gets llama.cpp's 400 `exceed_context_size_error`, and `/props` reports it;
- the "generate" kind generates as a small model does: a word a token (`words`, in turn) until
  the request's `max_tokens`, else until the window is full (`finish_reason: length`), else
  `limit` words;
- `usage=None` sends no usage in the stream (llama-cpp-python sends none);
- the "crash" kind answers 200 and drops the connection before any byte of the body, and
  "empty" answers 200 with an empty body: a server that died after accepting the request;
- a client that closes the connection mid-stream stops the generation: `fake.client_closed` is
  set and `fake.generated` says how many pieces were sent before it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG_SECONDS = 600  # a hang lasts until the test is over: the client's time limit or a cancel ends it


def _chunk(delta: dict, finish: str | None = None, usage: dict | None = None) -> dict:
    choices = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
    out = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000,
           "model": "test-model", "choices": choices}
    if usage:
        out["usage"] = usage
    return out


class FakeLLM:
    """What the server answers and what it was asked."""

    def __init__(self):
        self.kind = "reply"
        self.options: dict = {}
        self.requests: list[dict] = []  # the JSON bodies
        self.seen: list[tuple[str, str | None]] = []  # (path, Authorization header) of each request
        self.refused: list[str] = []  # why each request the strict checks refused was refused
        self.port = 0
        self.stopped = threading.Event()  # ends a hang when the test is over
        self.models: dict[str, tuple[str, dict]] = {}  # model name -> (kind, options) of its own
        self.window: int | None = None  # a local server's context window (tokens = characters / 4)
        self.client_closed = threading.Event()  # a client went away mid-stream
        self.generated = 0  # pieces streamed by the last "generate" answer

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def behave(self, kind: str, **options) -> None:
        self.kind, self.options = kind, options

    def per_model(self, model: str, kind: str, **options) -> None:
        self.models[model] = (kind, options)

    def behaviour(self, body: dict) -> tuple[str, dict]:
        return self.models.get(str(body.get("model")), (self.kind, self.options))

    def usage(self, options: dict | None = None) -> dict | None:
        options = self.options if options is None else options
        return options.get("usage", {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17})

    def generation(self, body: dict, options: dict) -> tuple[list[str], str]:
        """(pieces, finish_reason) of a small model that does not stop by itself."""
        room = (self.window - request_tokens(body)) if self.window else None
        asked = body.get("max_tokens") or body.get("max_completion_tokens")
        bounds = [b for b in (asked, room) if b]
        n = min(bounds) if bounds else options.get("limit", 200)
        words = options.get("words", [" word"])  # (litellm refuses a stream of 100 identical chunks)
        return [words[i % len(words)] for i in range(max(n, 0))], "length"

    def reply_body(self, kind: str | None = None, options: dict | None = None) -> dict:
        kind, options = (self.kind, self.options) if options is None else (kind, options)
        text = options.get("text", "Hello from the test model.")
        message: dict = {"role": "assistant", "content": text}
        finish = "stop"
        if kind == "tool":
            message["content"] = options.get("text")
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                for c in _calls(options)]
            finish = "tool_calls"
        return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000,
                "model": "test-model", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": self.usage(options)}

    def stream_chunks(self, kind: str | None = None, options: dict | None = None) -> list[dict]:
        kind, options = (self.kind, self.options) if options is None else (kind, options)
        default = [options["text"]] if options.get("text") else ["Hello", " from", " the", " stream."]
        pieces = options.get("pieces", default)
        chunks = [_chunk({"role": "assistant", "content": ""})]
        chunks += [_chunk({"reasoning_content": t}) for t in options.get("thinking", ())]
        chunks += [_chunk({"content": p}) for p in pieces]
        finish = "stop"
        if kind == "tool":
            for i, c in enumerate(_calls(options)):
                call = {"index": i, "id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": ""}}
                chunks.append(_chunk({"tool_calls": [call]}))
                text = json.dumps(c["arguments"])
                for part in (text[: len(text) // 2], text[len(text) // 2:]):
                    chunks.append(_chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
            finish = "tool_calls"
        chunks.append(_chunk({}, finish=options.get("finish", finish)))
        usage = self.usage(options)
        if usage is not None:
            chunks.append(_chunk({}, usage=usage))
        return chunks


def _calls(options: dict) -> list[dict]:
    """The tool calls of a "tool" reply: a script's, else one read of src/app.py."""
    return options.get("calls") or [{"id": "call_1", "name": "read", "arguments": {"path": "src/app.py"}}]


ERRORS = {
    "401": (401, "invalid_api_key", "Incorrect API key provided: dummy"),
    "429": (429, "rate_limit_exceeded", "Rate limit reached for test-model"),
    "500": (500, "server_error", "The server had an error while processing your request"),
    "400": (400, "invalid_request_error", "messages: must not be empty"),
    "404": (404, "model_not_found", "The model `test-model` does not exist"),
}


def request_tokens(body: dict) -> int:
    """A request's size as the fake counts it: the characters of its messages / 4."""
    return len(json.dumps(body.get("messages") or [])) // 4


def strict_problem(messages) -> str | None:
    """Why OpenAI would refuse these chat messages (its own wording), or None if it accepts them."""
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'"
    pending: list[str] = []  # tool_call_ids of the last assistant message not answered yet
    answerable: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in answerable:
                return ("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                        "message with 'tool_calls'.")
            answerable.discard(call_id)
            pending = [c for c in pending if c != call_id]
            continue
        if pending:
            return ("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                    "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                    + ", ".join(pending))
        answerable = set()
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if "content" not in m:
                return (f"messages[{i}]: an assistant message without 'content' (local servers' chat "
                        "templates read it: llama-cpp-python's fails on one)")
            content = m.get("content")
            if not calls and (content is None or content == "" or content == []):
                return (f"Invalid value for 'messages[{i}]': an assistant message must have 'content' "
                        "or 'tool_calls'.")
            pending = [c.get("id") for c in calls]
            answerable = set(pending)
    if pending:
        return ("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                + ", ".join(pending))
    return None


def _handler(fake: FakeLLM):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # keep test output clean
            pass

        def do_GET(self):
            """What a local server says of itself: llama.cpp's /props and the /models list."""
            if self.path == "/props" and fake.window:
                return self._json(200, {"default_generation_settings": {"n_ctx": fake.window}})
            if self.path in ("/v1/models", "/models"):
                meta = {"n_ctx_train": fake.window} if fake.window else {}
                return self._json(200, {"object": "list", "data": [{"id": "test-model", "meta": meta}]})
            return self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self):
            if self.path not in ("/v1/chat/completions", "/chat/completions"):
                return self._json(404, {"error": {"message": f"no route {self.path}"}})
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            fake.requests.append(body)
            fake.seen.append((self.path, self.headers.get("Authorization")))
            kind, options = fake.behaviour(body)
            if "on_request" in options:
                options["on_request"](body)
            if "answer" in options:  # a reply made from the request (a judge that reads what it is shown)
                options = {**options, "text": options["answer"](body)}
            if "script" in options and kind == "script":  # a whole reply made from the request
                made = options["script"](body)
                n = len(fake.requests)
                calls = [{"id": f"call_{n}_{i}", "name": name, "arguments": args}
                         for i, (name, args) in enumerate(made.get("calls") or ())]
                text = made.get("text")
                options = {**options, "text": text, "pieces": [text] if text else [], "calls": calls}
                if "usage" in made:  # (what the server reports this reply cost)
                    options["usage"] = made["usage"]
                kind = "tool" if calls else "reply"
            refused = strict_problem(body.get("messages"))
            if refused:
                fake.refused.append(refused)
                return self._json(400, {"error": {"message": refused, "type": "invalid_request_error",
                                                  "param": "messages", "code": None}})
            if fake.window and request_tokens(body) > fake.window:
                return self._json(400, {"error": {
                    "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": request_tokens(body),
                    "n_ctx": fake.window,
                    "message": "the request exceeds the available context size, try increasing it"}})
            if kind == "crash":  # accepted, then the process died: headers and nothing after
                return self._crash()
            if kind == "empty":
                return self._raw(200, "application/json", b"")
            if kind == "generate" and body.get("stream"):
                pieces, finish = fake.generation(body, options)
                counted = {"prompt_tokens": request_tokens(body), "completion_tokens": len(pieces),
                           "total_tokens": request_tokens(body) + len(pieces)}
                chunks = fake.stream_chunks("reply", {"usage": counted, **options, "pieces": pieces, "finish": finish})
                return self._stream(chunks, broken=False, delay=options.get("delay"), counting=True)
            if kind in ERRORS:
                status, code, message = ERRORS[kind]
                return self._json(status, {"error": {"message": message, "type": code, "code": code}})
            if kind == "html":  # a wrong --api-base: some web server's page, with a 200
                return self._raw(200, "text/html", b"<!doctype html><html><body><h1>Welcome</h1></body></html>")
            if kind == "badjson":
                return self._raw(200, "application/json", b'{"id": "chatcmpl-test", "choices": [')
            if kind == "cut":  # the body stops short of its Content-Length
                return self._raw(200, "application/json", b'{"id": "chatcmpl-test"', length=400)
            if kind == "anthropic404":  # Anthropic's error shape
                return self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                                   "message": "model: test-model"}})
            if kind == "hang":
                fake.stopped.wait(HANG_SECONDS)
                return self._json(200, fake.reply_body(kind, options))
            if body.get("stream"):
                return self._stream(fake.stream_chunks(kind, options), broken=kind == "break", delay=options.get("delay"))
            return self._json(200, fake.reply_body(kind, options))

        def _raw(self, status: int, ctype: str, data: bytes, length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(length or len(data)))
            self.end_headers()
            self.wfile.write(data)
            if length:
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)

        def _json(self, status: int, obj: dict) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _crash(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)

        def _stream(self, chunks: list[dict], broken: bool, delay: float | None = None,
                    counting: bool = False) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if broken:
                chunks = chunks[:3]
            if counting:
                fake.generated = 0
            for c in chunks:
                if delay and c["choices"] and c["choices"][0]["delta"].get("content"):
                    fake.stopped.wait(delay)  # a slow model: each piece after a pause
                try:
                    self._send_chunk(f"data: {json.dumps(c)}\n\n".encode())
                except OSError:  # the client closed the connection: a real server stops generating
                    fake.client_closed.set()
                    self.close_connection = True
                    return
                if counting:
                    fake.generated += 1
            if broken:  # cut the connection without the terminating chunk: a truncated body
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self._send_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")

        def _send_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a client that gave up is expected here
        pass


def start_fake_llm():
    """Start a fake model server; returns (fake, stop)."""
    fake = FakeLLM()
    server = _Server(("127.0.0.1", 0), _handler(fake))
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()

    def stop() -> None:
        fake.stopped.set()
        server.shutdown()
        server.server_close()

    return fake, stop
