"""Summaries for compactions (SPEC §6) and branch summaries (SPEC §4): by a model, or extractive.

Both kinds share one section structure (goal, constraints, progress, decisions, next steps,
critical context) so a later summary, or a person, can read either. The extractive summarizer
needs no model: it quotes the session's own messages (leaving out chatter), deterministically, and
is labelled a "draft (no model)" because it cannot judge what mattered. `details` records what
made the text: `model` (with the model, its usage and cost), `extractive`, or `edited` (with what
drafted it) when a person changed the draft before it was written.
The files read and modified are not asked of the model: the plan collects them from tool calls
and the write appends them (`with_file_lists`).
"""

from __future__ import annotations

import hashlib
import re

import orjson

from ..core.compaction import (
    BranchSummaryPlan,
    CompactionPlan,
    plan_branch_summary,
    plan_compaction,
    with_file_lists,
)
from ..core.context import settings_on
from ..core.entries import BRANCH_SUMMARY, COMPACTION, Entry, as_key, content_text, tool_calls
from ..core.errors import InvalidWrite
from ..core.agents.tools import tool_action
from ..core.reader import first_kept_id
from ..core.session import ForkResult, Session
from ..core.summary_writes import write_branch_summary, write_compaction
from ..core.messages import summary_message_of
from .cancel import Cancel
from .errors import ModelError
from .limits import estimated_tokens, summary_max_tokens
from .llm import DeltaCallback, ModelConfig, Reply, complete
from .table import context_window

SECTIONS = """## Goal
[What the user is trying to accomplish; several items if the conversation covers several tasks.]

## Constraints & Preferences
- [Requirements, constraints and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Completed work]

### In Progress
- [ ] [Work under way]

### Blocked
- [What prevents progress, or "(none)"]

## Key Decisions
- **[Decision]**: [short rationale]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, names, error messages, references needed to continue, or "(none)"]"""

SYSTEM = (
    "You summarize conversations between a user and an AI assistant so that the work can continue "
    "from the summary alone. Do not continue the conversation and do not answer questions in it: "
    "output only the structured summary."
)

RULES = (
    "Keep each section short. Preserve exact file paths, function names, commands and error messages. "
    "Output only the summary in the format above."
)

_MARK = re.compile(r"^(?:[-*]|\d+\.)\s*(?:\[[ x]\]\s*)?")  # "- ", "1. ", "- [x] " before a list item
_FILE_NOTES = ("Files read:", "Files modified:")  # recomputed on every compaction, never carried over
DRAFT_LABEL = "draft (no model)"  # what the extractive summarizer's text is, said wherever it shows
_MAX_MESSAGE_CHARS = 4000  # per transcript message: a huge tool result must not crowd out the rest


# -- transcript ------------------------------------------------------------------------------------


def _part_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if p.get("type") == "text" else "[image]" for p in content)
    return ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters]"


def transcript(messages: list[dict]) -> str:
    """LLM messages as a plain-text transcript, so the model reads them rather than continues them."""
    lines = []
    for m in messages:
        text = _clip(_part_text(m.get("content")), _MAX_MESSAGE_CHARS)
        role = m.get("role")
        if role == "assistant":
            if text:
                lines.append(f"[Assistant]: {text}")
            for call in m.get("tool_calls") or ():
                fn = call.get("function", {})
                lines.append(f"[Assistant tool call]: {fn.get('name')}({fn.get('arguments', '')})")
        elif role == "tool":
            lines.append(f"[Tool result]: {text}")
        elif role == "system":
            lines.append(f"[System]: {text}")
        else:
            lines.append(f"[User]: {text}")
    return "\n\n".join(lines)


def _llm_messages(prompt: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]


def _focus(instructions: str | None) -> str:
    text = (instructions or "").strip()
    return f"\n\nAdditional focus from the user: {text}" if text else ""


def _ask(config: ModelConfig, prompt: str, replaced: list[dict], on_delta: DeltaCallback | None = None,
         cancel: Cancel | None = None) -> Reply:
    """The model's summary of the messages `replaced`, streamed (so a slow model is timed out on
    silence, not on the whole call) and bounded to a share of what it replaces. An empty reply
    raises; so does one cut at that bound, which is no finished summary (ModelError "cut", its
    text in the details)."""
    replaced_tokens = estimated_tokens(replaced)
    reply = complete(config, _llm_messages(prompt), stream=True, on_delta=on_delta, cancel=cancel,
                     max_tokens=summary_max_tokens(replaced_tokens))
    if reply.cut:
        raise ModelError("cut", f"The summary was cut at {reply.max_tokens} tokens, the most a summary of "
                                f"these {replaced_tokens} tokens (estimated) may take, before the model finished "
                                "it: nothing was written. Try again, or give it instructions to be brief.",
                         reply.text)
    return reply


# -- model summaries -------------------------------------------------------------------------------


def compaction_prompt(plan: CompactionPlan, instructions: str | None = None) -> str:
    """The one prompt a model gets for a compaction: transcript, previous summary, split turn."""
    _check(plan)
    parts = [f"<conversation>\n{transcript(plan.messages_of(plan.summarize))}\n</conversation>"]
    if plan.turn_prefix:
        parts.append(
            "<turn-prefix>\n" + transcript(plan.messages_of(plan.turn_prefix)) + "\n</turn-prefix>\n"
            "The turn-prefix above is the EARLY PART of a turn too long to keep whole; its later part is kept "
            "verbatim after the summary. Cover the turn's original request and early progress so the kept part "
            "makes sense (under In Progress)."
        )
    previous = plan.previous_summary
    if previous:
        parts.append(
            f"<previous-summary>\n{with_file_lists(previous, [], [])}\n</previous-summary>\n"
            "The conversation above is NEW since the previous summary. UPDATE the previous summary: keep "
            "everything in it that still holds, add the new progress, decisions and context, move finished "
            "items from In Progress to Done. Do not drop the previous goal or constraints."
        )
    else:
        parts.append("Summarize the conversation above as a checkpoint another assistant will continue from.")
    parts.append(f"Use this EXACT format:\n\n{SECTIONS}\n\n{RULES}{_focus(instructions)}")
    return "\n\n".join(parts)


def branch_prompt(plan: BranchSummaryPlan, instructions: str | None = None) -> str:
    carried = ""
    if plan.previous_summary:
        carried = (
            f"<previous-summary>\n{with_file_lists(plan.previous_summary, [], [])}\n</previous-summary>\n"
            "The branch began with a compaction: the previous summary above covers its earlier work. Carry "
            "it forward into your summary, so that none of it is lost.\n\n"
        )
    return (
        f"{carried}<conversation>\n{transcript(plan.messages())}\n</conversation>\n\n"
        "The conversation above is a BRANCH the user is leaving to continue elsewhere. Summarize what was "
        "tried, learned and done on it, so that none of it is lost when the conversation goes on without it."
        f"\n\nUse this EXACT format:\n\n{SECTIONS}\n\n{RULES}{_focus(instructions)}"
    )


def _replaced(plan: CompactionPlan) -> list[dict]:
    """What a compaction's summary takes the place of: the summarized messages and the summary before."""
    previous = [summary_message_of(plan.previous_summary)] if plan.previous_summary else []
    return previous + plan.messages_to_summarize()


def model_compaction_summary(config: ModelConfig, plan: CompactionPlan, instructions: str | None = None,
                             on_delta: DeltaCallback | None = None, cancel: Cancel | None = None) -> Reply:
    return _ask(config, compaction_prompt(plan, instructions), _replaced(plan), on_delta, cancel)


def model_branch_summary(config: ModelConfig, plan: BranchSummaryPlan, instructions: str | None = None,
                         on_delta: DeltaCallback | None = None, cancel: Cancel | None = None) -> Reply:
    _check_branch(plan)
    return _ask(config, branch_prompt(plan, instructions), plan.messages(), on_delta, cancel)


# -- extractive summaries --------------------------------------------------------------------------


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _texts(entries: list[Entry], role: str) -> list[str]:
    """The texts of the `role` messages among `entries` that say something (not chatter)."""
    texts = (content_text(e.message.get("content")).strip() for e in entries if e.role == role)
    return [t for t in texts if t and not is_chatter(t)]


_ACK = re.compile(
    r"(?:ok(?:ay)?|k|yes|yeah|yep|yup|yo|no|nope|sure|thanks?(?: you)?|thx|ty|cool|nice|great|good|perfect|"
    r"alright|right|fine|done|go(?: on| ahead)?|continue|do it|lgtm|hm+|ah+|oh+|wow|lol|[?!.]+)[\s!.?,]*", re.I)


def is_chatter(text: str) -> bool:
    """A message that states nothing worth a summary: an acknowledgement, a one-word reply, a
    slash command, a raw JSON dump."""
    text = text.strip()
    if _ACK.fullmatch(text) or (len(text.split()) == 1 and len(text) < 25) or re.fullmatch(r"/[\w-]+", text):
        return True
    if text[:1] in "{[":
        try:
            orjson.loads(text)
            return True
        except orjson.JSONDecodeError:
            return sum(text.count(c) for c in '{}[]":,') > len(text) / 5  # a JSON dump cut short
    return False


def _first_sentence(text: str, limit: int) -> str:
    """The first line or sentence of a message: what it concludes, without the narration after."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    match = re.match(r"(.+?[.!?])(?:\s|$)", line)
    return _short(match.group(1) if match and len(match.group(1)) > 20 else line, limit)


def _completed_work(entries: list[Entry]) -> list[str]:
    """What tool calls got done: files edited or written whose call did not fail."""
    failed = {e.message.get("toolCallId") for e in entries if e.role == "toolResult" and e.message.get("isError")}
    out = []
    for e in entries:
        for call in tool_calls(e):
            action = tool_action(call)
            if call.get("id") in failed or action.kind not in ("edit", "write"):
                continue
            out.extend(f"{'Edited' if action.kind == 'edit' else 'Wrote'} `{path}`" for path in action.paths)
    return _unique(out)


def _final_statements(entries: list[Entry]) -> list[str]:
    """The assistant's last word in each turn (its last message before the next user message),
    not the narration that goes with its tool calls along the way."""
    out = []
    for i, e in enumerate(entries):
        if e.role != "assistant" or e.message.get("stopReason") in ("error", "aborted"):
            continue
        text = content_text(e.message.get("content")).strip()
        later = next((x for x in entries[i + 1:] if x.role in ("user", "assistant")), None)
        if text and not is_chatter(text) and (later is None or later.role == "user"):
            out.append(_first_sentence(text, 300))
    return out


def _done(entries: list[Entry]) -> list[str]:
    return _unique(_completed_work(entries)[-6:] + _final_statements(entries)[-3:])


def _section(summary: str, title: str) -> str | None:
    match = re.search(rf"^#+ {re.escape(title)}[ \t]*\n(.*?)(?=^#+ |\Z)", summary, re.S | re.M)
    return match.group(1).strip() if match else None


def _bullets(summary: str | None, title: str) -> list[str]:
    body = _section(summary, title) if summary else None
    items = [_MARK.sub("", line.strip()) for line in (body or "").splitlines()]
    return [i for i in items if i and not i.startswith("(none")]


def _list(items: list[str], mark: str = "-", empty: str = "(none)") -> str:
    return "\n".join(f"{mark} {i}" for i in items) if items else f"- {empty}"


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _extractive(
    goal: str,
    constraints: list[str],
    done: list[str],
    in_progress: list[str],
    next_steps: list[str],
    critical: list[str],
) -> str:
    return "\n".join([
        "## Goal", goal, "",
        "## Constraints & Preferences", _list(constraints[-8:], empty="(none stated)"), "",
        "## Progress", "### Done", _list(done[-12:], "- [x]"), "",
        "### In Progress", _list(in_progress, "- [ ]"), "",
        "### Blocked", "- (none recorded)", "",
        "## Key Decisions", "- (not extracted: see Progress)", "",
        "## Next Steps", _list(next_steps, "1."), "",
        "## Critical Context", _list(critical),
    ])


def _context_notes(entries: list[Entry], read: list[str], modified: list[str]) -> list[str]:
    """Files touched, and the branch summaries the conversation came back with."""
    out = [
        "Earlier branch: " + _short(with_file_lists(str(e.get("summary") or ""), [], []), 300)
        for e in entries
        if e.type == BRANCH_SUMMARY and str(e.get("summary") or "").strip()
    ]
    if modified:
        out.append(f"{_FILE_NOTES[1]} " + ", ".join(modified))
    if read:
        out.append(f"{_FILE_NOTES[0]} " + ", ".join(read))
    return out


def _pending(entries: list[Entry]) -> list[str]:
    """The last user request when nothing answered it: the obvious next step."""
    for e in reversed(entries):
        if e.role == "user":
            text = content_text(e.message.get("content")).strip()
            return [f"Answer: {_short(text, 200)}"] if text else []
        if e.role == "assistant":
            return []
    return []


def extractive_compaction_summary(plan: CompactionPlan) -> str:
    """Goal = the first user message (or the previous summary's goal), constraints = later user
    messages, done = the last answers, all quoted short; earlier bullets are carried over."""
    _check(plan)
    previous = with_file_lists(plan.previous_summary, [], []) if plan.previous_summary else None
    users = _texts(plan.summarize, "user")
    request = _texts(plan.turn_prefix, "user")  # a split turn's request: under way, kept in part
    goal = _section(previous, "Goal") if previous else None
    if not goal and (users or request):
        goal = _short((users or request)[0], 500)
        users = users[1:]
    notes = _context_notes(plan.entries_to_summarize(), plan.read_files, plan.modified_files)
    carried = [c for c in _bullets(previous, "Critical Context") if not c.startswith(_FILE_NOTES)]
    critical = _unique(carried + notes)
    if previous and _section(previous, "Goal") is None:  # free-form: keep it whole rather than lose it
        critical.append("Earlier summary: " + _short(previous, 1000))
    constraints = _unique(_bullets(previous, "Constraints & Preferences") + [_first_sentence(u, 200) for u in users])
    done = _unique(_bullets(previous, "Done") + _done(plan.summarize))
    in_progress = [f"{_short(request[0], 300)} (this turn continues in the kept messages)"] if request else []
    next_steps = [] if request else _pending(plan.summarize)
    return _extractive(
        goal or "(no user message in the summarized part)", constraints, done, in_progress,
        next_steps or ["Continue from the messages kept after this summary."], critical,
    )


def extractive_branch_summary(plan: BranchSummaryPlan) -> str:
    """The same sections as a model would fill, quoted from the branch (a compaction it starts
    from is carried forward). Nothing in it assumes the branch is being left: a comparison
    summarizes the active branch the same way."""
    _check_branch(plan)
    previous = with_file_lists(plan.previous_summary, [], []) if plan.previous_summary else None
    users = _texts(plan.entries, "user")
    goal = _section(previous, "Goal") if previous else None
    if not goal:
        goal = _short(users[0], 500) if users else "(no user message on this branch: it answered the one before it)"
        users = users[1:]
    constraints = _unique(_bullets(previous, "Constraints & Preferences") + [_first_sentence(u, 200) for u in users])
    done = _unique(_bullets(previous, "Done") + _done(plan.entries))
    next_steps = _pending(plan.entries) or ["(nothing pending on this branch)"]
    carried = [c for c in _bullets(previous, "Critical Context") if not c.startswith(_FILE_NOTES)]
    if previous and _section(previous, "Goal") is None:
        carried.append("Earlier summary: " + _short(previous, 1000))
    critical = _unique(carried + _context_notes(plan.entries, plan.read_files, plan.modified_files))
    return _extractive(goal, constraints, done, [], next_steps, critical)


def _check(plan: CompactionPlan) -> None:
    if not plan.can_compact:
        raise InvalidWrite(plan.reason)


def _check_branch(plan: BranchSummaryPlan) -> None:
    if not plan.has_content:
        raise InvalidWrite("nothing to summarize: the branch being left has no entries of its own")


# -- choosing --------------------------------------------------------------------------------------


def _made_by(config: ModelConfig | None, reply: Reply | None) -> dict:
    """`details` of a summary as drafted: by the model (with its usage and cost), or extractive."""
    if reply is None:
        return {"summarizer": "extractive", "model": None, "label": DRAFT_LABEL}
    return {"summarizer": "model", "model": config.model, "usage": reply.usage}


def summarize_compaction(
    config: ModelConfig | None, plan: CompactionPlan, instructions: str | None = None,
    on_delta: DeltaCallback | None = None, cancel: Cancel | None = None,
) -> tuple[str, dict]:
    """(summary, details): the model when one is configured, else extractive (which ignores
    `instructions`). A model failure is raised, never silently replaced by an extract."""
    if config is not None and config.configured:
        reply = model_compaction_summary(config, plan, instructions, on_delta, cancel)
        return reply.text.strip(), _made_by(config, reply)
    return extractive_compaction_summary(plan), _made_by(None, None)


def summarize_branch(
    config: ModelConfig | None, plan: BranchSummaryPlan, instructions: str | None = None,
    on_delta: DeltaCallback | None = None, cancel: Cancel | None = None,
) -> tuple[str, dict]:
    if config is not None and config.configured:
        reply = model_branch_summary(config, plan, instructions, on_delta, cancel)
        return reply.text.strip(), _made_by(config, reply)
    return extractive_branch_summary(plan), _made_by(None, None)


def draft_digest(text: str) -> str:
    """A fingerprint of a drafted summary, to tell later whether a person changed it (line
    endings and surrounding blanks, which a browser's textarea alters, do not count)."""
    return hashlib.sha256(text.replace("\r\n", "\n").strip().encode()).hexdigest()[:16]


def written_details(text: str, drafted: dict | None, digest: str | None) -> dict:
    """`details` for a summary about to be written: as drafted when the text is the draft,
    else `edited`, saying what drafted it (None: a person wrote it from nothing)."""
    drafted = drafted or {}
    if drafted.get("summarizer") and digest and draft_digest(text) == digest:
        return drafted
    out = {"summarizer": "edited", "draftedBy": drafted.get("summarizer"), "model": drafted.get("model")}
    if drafted.get("usage"):
        out["usage"] = drafted["usage"]  # the draft was paid for all the same
    return out


def fork_with_summary(
    session: Session,
    target_id: str,
    position: str = "at",
    config: ModelConfig | None = None,
    instructions: str | None = None,
    on_delta: DeltaCallback | None = None,
) -> ForkResult:
    """SPEC §4 fork that writes a branch_summary of the branch being left instead of a leaf entry.

    The summary is made before anything is written, so a failed model call leaves the session as
    it was. The summary entry, a child of the new leaf, becomes the active leaf.
    """
    if position not in ("at", "before"):
        raise InvalidWrite(f"position must be 'at' or 'before', not {position!r}")
    tree = session.tree
    target = tree.entry(target_id)
    new_leaf = target_id if position == "at" else tree.parent[target_id]
    plan = plan_branch_summary(tree, tree.active_leaf, new_leaf)
    summary, details = summarize_branch(config, plan, instructions, on_delta)
    entry = write_branch_summary(session, plan, summary, details)
    edit = None
    if position == "before" and target.role == "user":
        edit = content_text(target.message.get("content"))
    return ForkResult(entry["id"], entry, edit)


def regeneration_plan(tree, entry_id: str) -> CompactionPlan | BranchSummaryPlan:
    """The plan a summary was made from, made again: the same parent, and the same cut (a
    compaction) or the same branch left (a branch summary)."""
    old = tree.entry(entry_id)
    parent = tree.parent[entry_id]
    if old.type == COMPACTION:
        settings = settings_on(tree, tree.path(parent))
        window = context_window(settings.provider, settings.model_id)
        plan = plan_compaction(tree, parent, context_window=window, first_kept=first_kept_id(old))
        if not plan.can_compact:
            raise InvalidWrite(f"this compaction cannot be made again: {plan.reason}")
        return plan
    if old.type == BRANCH_SUMMARY:
        from_id = as_key(old.get("fromId"))
        if from_id not in tree.by_id:
            raise InvalidWrite(f"the branch this summary left ({from_id!r}) is not in the session")
        return plan_branch_summary(tree, from_id, parent)
    raise InvalidWrite("only a compaction or a branch summary can be regenerated")


def summarizer_for(plan: CompactionPlan | BranchSummaryPlan):
    """summarize_compaction or summarize_branch, whichever makes this plan's summary."""
    return summarize_compaction if isinstance(plan, CompactionPlan) else summarize_branch


def regenerate_summary(session: Session, config: ModelConfig | None, entry_id: str,
                       text: str | None = None, details: dict | None = None,
                       on_delta: DeltaCallback | None = None) -> dict:
    """A new summary beside an old one (see regeneration_plan): a new entry, which becomes the
    active leaf; the old line stays as it is. `text` (with its `details`) is a summary already
    drafted and read, else the summarizer makes one now. CLI and web share it."""
    plan = regeneration_plan(session.tree, entry_id)
    if text is None:
        text, details = summarizer_for(plan)(config, plan, None, on_delta)
    write = write_compaction if isinstance(plan, CompactionPlan) else write_branch_summary
    return write(session, plan, text, {**(details or {}), "regenerates": entry_id})
