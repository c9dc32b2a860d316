"""Claude Code's reader: its transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`) as entries.

The mapping is `shared/formats/claude-code.md`: `uuid`/`parentUuid` are ids and parents; the
lines of one assistant message split over several lines are one message; a user line of tool
results is one `toolResult` message per result; a `compact_boundary` with the summary line after
it is one compaction; sub-agent (sidechain) entries hang under the Task call that started them,
whether inline or in the `subagents/` files beside the session (read with it); lines without a
`uuid` are session metadata, not nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ...entries import Entry
from ...storage import sidecar_files, sidecar_stamp
from ...formats.base import INVALID, Problem
from ...formats.fields import checked_entry
from ...formats.readonly import Built, ReadOnlyReader
from . import CLAUDE_CODE, METADATA_TYPES

SOURCE = CLAUDE_CODE.name
_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "toolUse", "max_tokens": "length",
                 "refusal": "error"}
_TASK_TOOLS = frozenset({"Task", "Agent"})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _image(block: dict) -> dict:
    src = block.get("source")
    src = src if isinstance(src, dict) else {}
    return {"type": "image", "data": src.get("data", ""), "mimeType": src.get("media_type", "image/png")}


def _blocks(content: Any) -> list:
    """Claude's content blocks as SPEC §2 blocks (unknown blocks are kept as they are)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    out = []
    for b in content:
        t = b.get("type") if isinstance(b, dict) else None
        if t == "tool_use":
            out.append({"type": "toolCall", "id": b.get("id", ""), "name": b.get("name", ""),
                        "arguments": b.get("input", {})})
        elif t == "image":
            out.append(_image(b))
        elif t == "redacted_thinking":
            out.append({"type": "thinking", "thinking": "(redacted thinking)", "redacted": True})
        else:  # text and thinking are the same in both formats
            out.append(b)
    return out


def _usage(usage: Any) -> dict | None:
    if not isinstance(usage, dict):
        return None
    def n(key: str) -> int:
        v = usage.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else 0
    out = {"input": n("input_tokens"), "output": n("output_tokens"),
           "cacheRead": n("cache_read_input_tokens"), "cacheWrite": n("cache_creation_input_tokens")}
    out["totalTokens"] = sum(out.values())
    return out


def _call_id(block: dict) -> bool:
    """Whether a tool call has an id of its own: calls without one must not all be one call
    named "" (a sub-agent would then hang under whichever of them came last)."""
    return isinstance(block.get("id"), str) and block["id"] != ""


class _Node:
    """An entry in the making: one or more lines of the file."""

    __slots__ = ("id", "line", "raw", "sources", "parent_ref", "sidechain", "kind", "msg_id", "user_like", "file",
                 "relinked")

    def __init__(self, id: str, line: int, raw: dict, obj: dict, parent_ref, kind: str, sidechain: bool):
        self.id = id
        self.line = line
        self.raw = raw
        self.sources = [obj]
        self.parent_ref = parent_ref  # the uuid the line names as its parent
        self.kind = kind  # assistant | user | result | compaction | custom
        self.sidechain = sidechain
        self.msg_id = None
        self.user_like = False
        self.file: str | None = None  # a sub-agent's file, which `line` counts in
        self.relinked: _Node | None = None  # its parent, when not the row its parentUuid names (see _replayed)



def _tag_text(text: str, tag: str) -> str | None:
    """What the first `<tag>…</tag>` of the text holds, found with two scans: a lazy pattern
    would rescan the rest of the text from every unclosed opening tag."""
    opening, closing = f"<{tag}>", f"</{tag}>"
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return text[start + len(opening):end] if end >= 0 else None


class ClaudeReader(ReadOnlyReader):
    name = SOURCE

    def beside(self) -> tuple:
        return sidecar_stamp(Path(self.log.path)) if self.log.path is not None else ()

    def build(self, items: list[tuple[int, dict]]) -> Built:
        problems: list[Problem] = []
        agents = _agent_lines(Path(self.log.path), problems) if self.log.path is not None else []
        built = _Build(items, agents).result()
        built.problems[:0] = problems
        return built


def _agent_lines(session: Path, problems: list[Problem]) -> list[tuple[str, list[tuple[int, dict]]]]:
    """The lines of each sub-agent transcript beside the session, by file name (`agent-acompact-*`
    files are Claude Code's own context compression, not a sub-agent of the session: left out)."""
    out: list[tuple[str, list[tuple[int, dict]]]] = []
    for path in sidecar_files(session):
        if path.name.startswith("agent-acompact-"):
            continue
        # (a workflow run's agents are named with their run: `workflows/<run>/agent-<id>.jsonl`)
        name = "/".join(path.parts[-3:]) if path.parent.parent.name == "workflows" else path.name
        try:
            data = path.read_bytes()
        except OSError as exc:
            problems.append(Problem("subagent-file", f"subagents/{name}: not read ({exc.strerror or exc})"))
            continue
        lines: list[tuple[int, dict]] = []
        out.append((name, lines))
        for n, raw in enumerate(data.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                problems.append(Problem("subagent-line", f"subagents/{name} line {n}: invalid JSON ({exc}); skipped"))
                continue
            if isinstance(obj, dict):
                lines.append((n, obj))
    return out


def _a_sub_agents_own(items: list[tuple[int, dict]]) -> bool:
    """Whether the file is a sub-agent's transcript read on its own (its session is gone, so it
    is listed alone): every row of it is a sidechain's. Its entries are then the conversation the
    file holds, read as a session's (as a Codex sub-agent's rollout is); the session it names is
    its link (`links.link_of`)."""
    rows = [obj for _, obj in items if isinstance(obj.get("uuid"), str) and obj.get("type") not in METADATA_TYPES]
    return bool(rows) and all(obj.get("isSidechain") is True for obj in rows)


def _workflow_run(file: str | None) -> str | None:
    """The run a workflow agent's file belongs to (`workflows/<run>/agent-<id>.jsonl`), else None."""
    parts = file.split("/") if file else []
    return parts[1] if len(parts) == 3 and parts[0] == "workflows" else None


class _Build:
    def __init__(self, items: list[tuple[int, dict]], agents: list[tuple[str, list[tuple[int, dict]]]] = ()):
        self.problems: list[Problem] = []
        self.metadata: list[tuple[int, dict]] = []
        self.nodes: list[_Node] = []
        self.alias: dict[str, _Node] = {}  # every uuid read -> the node it became part of
        self.anchor: dict[str, _Node] = {}  # a split line's uuid -> the node its children hang on
        self.tool_names: dict[str, str] = {}
        self.call_owner: dict[str, _Node] = {}  # tool call id -> the assistant node that made it
        self.agent_calls: dict[str, str] = {}  # sub-agent id -> the tool call id its result answers
        self.run_calls: dict[str, str] = {}  # workflow run id -> the tool call id whose result names it
        self.replays: dict[str, _Node] = {}  # a re-appended row's uuid -> where the conversation was then
        self.last_main: _Node | None = None
        self.file: str | None = None  # the sub-agent file being read, None for the session's own
        self.header = {"type": "session", "version": 3, "id": None, "timestamp": None, "cwd": None,
                       "source": SOURCE}
        summaries = self._summary_lines([*items, *(x for _, lines in agents for x in lines)])
        self.alone = _a_sub_agents_own(items)
        for line, obj in items:
            self._line(line, obj, summaries)
        for name, lines in agents:  # their line numbers are those of their own file
            self.file = name
            for line, obj in lines:
                self._line(line, obj, summaries, agent=True)
        self.file = None
        self._title(items)

    # -- lines ---------------------------------------------------------------------------------

    def _summary_lines(self, items) -> dict[str, tuple[int, dict]]:
        """The `isCompactSummary` user line of each compact boundary, by the boundary's uuid."""
        boundaries = {o.get("uuid") for _, o in items
                      if o.get("type") == "system" and o.get("subtype") == "compact_boundary"}
        return {o["parentUuid"]: (n, o) for n, o in items
                if o.get("isCompactSummary") is True and o.get("parentUuid") in boundaries}

    def _line(self, line: int, obj: dict, summaries, agent: bool = False) -> None:
        """One line; `agent`: of a sub-agent file, whose nodes are all sidechain and whose other
        lines say nothing of the session."""
        uuid, t = obj.get("uuid"), obj.get("type")
        if not isinstance(uuid, str) or not uuid or t in METADATA_TYPES:
            if not agent:
                self.metadata.append((line, obj))
            return
        h = self.header
        for key, field in (("id", "sessionId"), ("timestamp", "timestamp"), ("cwd", "cwd")):
            if h[key] is None and isinstance(obj.get(field), str):
                h[key] = obj[field]
        if "sourceVersion" not in h and isinstance(obj.get("version"), str):
            h["sourceVersion"] = obj["version"]
        if obj.get("isCompactSummary") is True and uuid in self.alias and self.alias[uuid].kind == "compaction" \
                and obj is self.alias[uuid].sources[-1]:
            return  # the summary of a compaction, read with it
        if uuid in self.alias and not agent and self._replayed(uuid, obj):
            self.metadata.append((line, obj))
            return
        if uuid in self.alias:
            first = self.alias[uuid]
            where = f"{first.file} line {first.line}" if first.file else f"line {first.line}"
            self.problems.append(Problem("duplicate-id", f"uuid {uuid!r} already used on {where}; "
                                         "this copy is not shown as a node", line, file=self.file))
            if not agent:
                self.metadata.append((line, obj))
            return
        sidechain = agent or obj.get("isSidechain") is True and not self.alone
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else ""
        parent = obj.get("parentUuid")
        if t == "assistant":
            self._assistant(line, obj, uuid, parent, ts, sidechain)
        elif t == "user":
            self._user(line, obj, uuid, parent, ts, sidechain)
        elif t == "system" and obj.get("subtype") == "compact_boundary":
            self._compaction(line, obj, uuid, ts, sidechain, summaries.get(uuid))
        else:
            kind = f"{t}:{obj['subtype']}" if isinstance(obj.get("subtype"), str) else str(t)
            raw = {"type": "custom", "customType": f"{SOURCE}/{kind}", "data": obj}
            self._add(_Node(uuid, line, raw, obj, parent, "custom", sidechain), ts)

    def _replayed(self, uuid: str, obj: dict) -> bool:
        """Whether the row is one Claude Code appended again as it was (the same uuid, parent and
        time): a second `/compact` in one process re-appends the rows before the first one's
        preserved segment, then writes the next rows under the last copy. What the person saw
        went on from where the conversation was: those rows hang there (`relinked`), and the
        copies are the same entries again, neither a fork nor a problem."""
        node = self.alias[uuid]
        first = next((o for o in node.sources if o.get("uuid") == uuid), None)
        if first is None or (first.get("parentUuid"), first.get("timestamp")) != (obj.get("parentUuid"), obj.get("timestamp")):
            return False
        if self.last_main is not None:
            self.replays[uuid] = self.last_main
        return True

    def _add(self, node: _Node, ts: str) -> None:
        ref = node.parent_ref
        if isinstance(ref, str) and ref in self.replays and not node.sidechain:
            node.relinked = self.replays[ref]
        node.file = self.file
        node.raw["timestamp"] = ts
        self.nodes.append(node)
        self.alias[node.id] = node

    def _assistant(self, line, obj, uuid, parent, ts, sidechain) -> None:
        msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        blocks = _blocks(msg.get("content"))
        for b in blocks:
            if b.get("type") == "toolCall" and _call_id(b):
                self.tool_names[b["id"]] = str(b.get("name"))
        msg_id = msg.get("id") if isinstance(msg.get("id"), str) else None
        prev = self._split_of(parent, msg_id)
        if prev is not None:  # one more line of a message split over several lines
            prev.raw["message"]["content"].extend(blocks)
            self._assistant_tail(prev.raw["message"], msg, obj)
            prev.sources.append(obj)
            self._own_calls(prev, blocks)
            prev.id = uuid  # the last line's uuid names the message; earlier ones are aliases
            self.alias[uuid] = prev
            between = self.alias.get(parent)
            if between is not None and between is not prev:  # what hangs on this line goes on after
                self.anchor[uuid] = between  # the results already read, not beside them
            if not sidechain:
                self.last_main = prev
            return
        out = {"role": "assistant", "content": blocks, "provider": "anthropic",
               "model": msg.get("model") if isinstance(msg.get("model"), str) else None}
        self._assistant_tail(out, msg, obj)
        node = _Node(uuid, line, {"type": "message", "message": out}, obj, parent, "assistant", sidechain)
        node.msg_id = msg_id
        self._own_calls(node, blocks)
        self._add(node, ts)
        if not sidechain:
            self.last_main = node

    def _own_calls(self, node: _Node, blocks: list) -> None:
        for b in blocks:
            if b.get("type") == "toolCall" and _call_id(b):
                self.call_owner[b["id"]] = node

    @staticmethod
    def _assistant_tail(out: dict, msg: dict, obj: dict) -> None:
        """What the last line of a message says for all of it: usage and why it stopped."""
        usage = _usage(msg.get("usage"))
        if usage is not None:
            out["usage"] = usage
        stop = msg.get("stop_reason")
        if isinstance(stop, str):
            out["stopReason"] = _STOP_REASONS.get(stop, stop)
        if obj.get("isApiErrorMessage") is True or obj.get("error"):
            out["stopReason"] = "error"
            out["errorMessage"] = _text(msg.get("content")) or str(obj.get("error") or "API error")

    def _split_of(self, parent, msg_id) -> _Node | None:
        """The assistant node this line continues: its parent, past side lines and the results
        of that message's calls (2.1.x writes each parallel `tool_use` of one message as a line
        of its own between the results and attachments of the others), with the same message id."""
        node = self.alias.get(parent) if isinstance(parent, str) else None
        while node is not None and node.kind in ("custom", "result"):
            ref = node.parent_ref
            node = self.alias.get(ref) if isinstance(ref, str) else None
        if node is not None and msg_id is not None and node.kind == "assistant" and node.msg_id == msg_id:
            return node
        return None

    def _user(self, line, obj, uuid, parent, ts, sidechain) -> None:
        msg = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        content = msg.get("content")
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        if not results:
            out: dict = {"role": "user", "content": _blocks(content)}
            if obj.get("isMeta") is True:
                out["isMeta"] = True
            node = _Node(uuid, line, {"type": "message", "message": out}, obj, parent, "user", sidechain)
            node.user_like = True
            self._add(node, ts)
            if not sidechain:
                self.last_main = node
            return
        others = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        made: list[dict] = []
        for b in results:
            call_id = b.get("tool_use_id")
            made.append({"role": "toolResult", "toolCallId": call_id if isinstance(call_id, str) else INVALID,
                         "toolName": self.tool_names.get(call_id, "?") if isinstance(call_id, str) else "?",
                         "content": _blocks(b.get("content")), "isError": b.get("is_error") is True})
        if others:
            made.append({"role": "user", "content": _blocks(others)})
        if "toolUseResult" in obj:
            made[len(results) - 1]["details"] = obj["toolUseResult"]
            said = obj["toolUseResult"] if isinstance(obj["toolUseResult"], dict) else {}
            call = results[-1].get("tool_use_id")
            if isinstance(call, str) and call:
                if isinstance(said.get("agentId"), str):
                    self.agent_calls[said["agentId"]] = call
                if isinstance(said.get("runId"), str):
                    self.run_calls[said["runId"]] = call
        ref = parent
        for i, m in enumerate(made):  # one entry per result, chained; the line's uuid names the last
            node_id = uuid if i == len(made) - 1 else f"{uuid}:{i + 1}"
            node = _Node(node_id, line, {"type": "message", "message": m}, obj, ref, "result", sidechain)
            self._add(node, ts)
            ref = node_id
            if not sidechain:
                self.last_main = node

    def _compaction(self, line, obj, uuid, ts, sidechain, summary) -> None:
        meta = obj.get("compactMetadata") if isinstance(obj.get("compactMetadata"), dict) else {}
        raw = {"type": "compaction", "summary": "", "firstKeptEntryId": None,
               "tokensBefore": meta.get("preTokens"),
               "details": {k: v for k, v in meta.items() if k != "preTokens"}}
        segment = meta.get("preservedSegment")
        head = segment.get("headUuid") if isinstance(segment, dict) else None
        node = _Node(uuid, line, raw, obj, obj.get("logicalParentUuid"), "compaction", sidechain)
        node.raw["_keptRef"] = head
        if summary is not None:
            n, s = summary
            msg = s.get("message") if isinstance(s.get("message"), dict) else {}
            raw["summary"] = _text(msg.get("content"))
            node.sources.append(s)
            self.alias[s["uuid"]] = node
            if not sidechain:
                self.last_main = node
        self._add(node, ts)

    def _title(self, items) -> None:
        uuids = self.alias
        found: dict[str, str] = {}
        for _, o in self.metadata:
            t = o.get("type")
            if t == "custom-title" and isinstance(o.get("customTitle"), str):
                found["custom"] = o["customTitle"]
            elif t == "ai-title" and isinstance(o.get("aiTitle"), str):
                found["ai"] = o["aiTitle"]
            elif t == "summary" and isinstance(o.get("summary"), str) and o.get("leafUuid") in uuids:
                found["summary"] = o["summary"]
        title = found.get("custom") or found.get("ai") or found.get("summary") or self._first_command()
        if title:
            self.header["title"] = title

    def _first_command(self) -> str | None:
        """A session that starts with a slash command is named by it (`/review the parser`), not
        by the command's markup, which is what its first user line holds."""
        first = next((n for n in self.nodes if n.kind == "user" and not n.sidechain
                      and not n.raw["message"].get("isMeta")), None)
        text = _text(first.raw["message"].get("content")) if first else ""
        name = _tag_text(text, "command-name")
        if name is None:
            return None
        args = _tag_text(text, "command-args")
        return " ".join(filter(None, (name.strip(), args.strip() if args else "")))

    # -- the tree ------------------------------------------------------------------------------

    def _parent_of(self, node: _Node) -> str | None:
        if node.relinked is not None:
            return node.relinked.id
        ref = node.parent_ref
        if not isinstance(ref, str) or not ref:
            return None
        target = self.anchor.get(ref) or self.alias.get(ref)
        if target is None:
            self.problems.append(Problem(
                "resumed-root", f"parent {ref!r} is not in this file (a resumed session starts so); "
                "shown as a root", node.line, node.id, node.file))
            return None
        return target.id if target is not node else None

    def _attach_sidechains(self, parent: dict[str, str | None]) -> None:
        """A sub-agent starts with a parentless line: hang it under the Task (or Agent) call whose
        result carries its `agentId` (newer files), else (old inline sub-agents) under the one whose
        prompt is that line's text."""
        for node in self.nodes:
            if node.sidechain and parent[node.id] is None:
                call = self.agent_calls.get(node.sources[0].get("agentId"))
                run = _workflow_run(node.file)
                if call is None and run is not None:
                    call = self.run_calls.get(run)
                owner = self.call_owner.get(call) if call else None
                if owner is None and run is not None:
                    owner = self._workflow_before(node)
                if owner is not None:
                    parent[node.id] = owner.id
        calls: dict[str, list[_Node]] = {}
        for node in self.nodes:
            if node.kind == "assistant":
                for b in node.raw["message"]["content"]:
                    if b.get("type") == "toolCall" and b.get("name") in _TASK_TOOLS \
                            and isinstance(b.get("arguments"), dict) and isinstance(b["arguments"].get("prompt"), str):
                        calls.setdefault(b["arguments"]["prompt"].strip(), []).append(node)
        for node in self.nodes:
            if node.sidechain and node.user_like and parent[node.id] is None:
                owners = calls.get(_text(node.raw["message"]["content"]).strip())
                if owners:
                    parent[node.id] = owners.pop(0).id

    def _workflow_before(self, node: _Node) -> _Node | None:
        """The last `Workflow` call made before a workflow run's first row (a run whose call's
        result does not name it)."""
        when = node.raw.get("timestamp") or ""
        owner = None
        for other in self.nodes:
            if other.kind == "assistant" and not other.sidechain and (other.raw.get("timestamp") or "") <= when \
                    and any(b.get("type") == "toolCall" and b.get("name") == "Workflow"
                            for b in other.raw["message"]["content"]):
                owner = other
        return owner

    def _drop_replays(self, parent: dict[str, str | None]) -> None:
        """Children of a compaction with one same timestamp are Claude Code writing the same
        line again after it compacted: the first is kept, the others' children hang on it."""
        by_id = {n.id: n for n in self.nodes}
        seen: dict[tuple[str, str], _Node] = {}
        dropped: set[str] = set()
        for node in self.nodes:
            p = parent[node.id]
            ts = node.raw.get("timestamp")
            if p is None or not ts or by_id[p].kind != "compaction":
                continue
            first = seen.setdefault((p, ts), node)
            if first is not node:
                dropped.add(node.id)
                self.problems.append(Problem("replay", f"a replay of line {first.line} after the compaction "
                                             "(same timestamp): only the first is shown", node.line, first.id,
                                             node.file))
                if self.last_main is node:
                    self.last_main = first
                for other in self.nodes:
                    if parent[other.id] == node.id:
                        parent[other.id] = first.id
        if dropped:
            self.nodes = [n for n in self.nodes if n.id not in dropped]

    def _linearise(self, parent: dict[str, str | None]) -> None:
        """Tool results and attachment/progress lines that hang beside the next line of a tool
        flow are not forks: chain such side lines (a childless one, or a chain of side lines
        with nothing else below) in file order above the others."""
        children: dict[str, list[_Node]] = {}
        for node in self.nodes:
            p = parent[node.id]
            if p is not None:
                children.setdefault(p, []).append(node)

        def side_tail(node: _Node) -> _Node | None:
            """The last node of the side chain `node` starts, or None when more than side lines hang below."""
            while node.kind in ("result", "custom"):
                kids = children.get(node.id, [])
                if not kids:
                    return node
                if len(kids) > 1 or kids[0].kind != "custom":
                    return None
                node = kids[0]
            return None

        for kids in list(children.values()):
            if len(kids) < 2:
                continue
            side = [(k, t) for k in kids if (t := side_tail(k)) is not None]
            rest = [k for k in kids if all(k is not s for s, _ in side)]
            if not side or (not rest and len(side) < 2):
                continue
            for (_, tail), (head, _) in zip(side, side[1:]):
                parent[head.id] = tail.id
            for k in rest:
                parent[k.id] = side[-1][1].id

    def result(self) -> Built:
        parent = {node.id: self._parent_of(node) for node in self.nodes}
        self._attach_sidechains(parent)
        self._drop_replays(parent)
        self._linearise(parent)
        entries = []
        for node in self.nodes:
            raw = node.raw
            kept = raw.pop("_keptRef", None)
            if node.kind == "compaction" and isinstance(kept, str) and kept in self.alias:
                raw["firstKeptEntryId"] = self.alias[kept].id
            raw = {"type": raw["type"], "id": node.id, "parentId": parent[node.id], **raw}
            raw, why = checked_entry(raw)
            if why:
                self.problems.append(Problem("invalid-field", "; ".join(why) + ": shown as invalid", node.line, node.id,
                                             node.file))
            source: Any = node.sources[0] if len(node.sources) == 1 else node.sources
            entries.append(Entry(raw, node.line, node.id, parent[node.id], False, source, node.sidechain, node.file))
        leaf = self.last_main.id if self.last_main is not None else (entries[-1].id if entries else None)
        self.problems.sort(key=lambda p: (p.file is not None, p.line or 0))
        return Built(self.header, entries, leaf, self.problems, self.metadata)
