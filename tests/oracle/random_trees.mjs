// Random session trees written by pi's own SessionManager, and what pi makes of them.
//
//   node random_trees.mjs write PKG_DIR OUT_DIR SEED COUNT ENTRIES
//       writes COUNT session files of about ENTRIES entries each into OUT_DIR with the
//       SessionManager of the pi package installed in PKG_DIR (1.6.0 or 0.73.1: the kinds of
//       entry that version can write), and prints, as JSON, the refusals pi's appendContextEdit
//       gave for edits it must refuse.
//   node random_trees.mjs read PKG_DIR FILE...
//       prints, as JSON, for each FILE: pi's context at every entry taken as the leaf (and at
//       the file's own leaf), each message with the id of the entry it came from, and (pi 1.6)
//       getUsageCostBreakdown of the file's entries.
//
// The random choices come from a seeded generator, so a seed writes the same trees again
// (ids and timestamps are pi's own: they differ from run to run).
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [mode, pkgDir, ...rest] = process.argv.slice(2);
const core = (name) => import(pathToFileURL(join(pkgDir, "dist", "core", name)).href);
const sm = await core("session-manager.js");
const msgs = await core("messages.js");
let usageTotals = null;
try {
	usageTotals = await core("usage-totals.js");
} catch {
	usageTotals = null; // (0.73.1 has no breakdown)
}
const IS_16 = typeof sm.buildSessionProjection === "function";

function rng(seed) {
	let s = seed >>> 0 || 1;
	return () => {
		s ^= s << 13;
		s >>>= 0;
		s ^= s >>> 17;
		s ^= s << 5;
		s >>>= 0;
		return s / 4294967296;
	};
}

let rand = rng(1);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const chance = (p) => rand() < p;
const int = (a, b) => a + Math.floor(rand() * (b - a + 1));
let serial = 0;
const WORDS = ["alpha", "beta", "gamma", "délta", "ε", "naïve", "tests", "fix", "the", "build", "🙂", "ok", "path/to/file.py",
	"line\nbreak", "tab\there", "quote\"s", "<b>tag</b>", "  spaced  "];
const text = (n = int(1, 12)) => `${++serial}: ${Array.from({ length: n }, () => pick(WORDS)).join(" ")}`;

const TOOLS = ["read", "bash", "edit", "write", "grep", "find"].map((name) => ({
	name,
	description: `The ${name} tool`,
	parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
}));

function usage() {
	const input = int(0, 5000), output = int(0, 800), cacheRead = int(0, 3) ? 0 : int(0, 9000), cacheWrite = chance(0.2) ? int(0, 500) : 0;
	const c = { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: cacheWrite * 3.75e-6 };
	c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost: c };
}

const MODELS = [["anthropic", "claude-sonnet-4-5"], ["openai", "gpt-5.1"], ["openrouter", "auto"]];

function userContent() {
	if (chance(0.6)) return text();
	const blocks = [{ type: "text", text: text() }];
	if (chance(0.3)) blocks.push({ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" });
	if (chance(0.3)) blocks.push({ type: "text", text: text() });
	return blocks;
}

function writeTree(dir, version16, entriesWanted, refusals) {
	const m = sm.SessionManager.create("/home/ana/proj", dir);
	const pending = []; // tool calls without results yet
	const append = {
		user: () => m.appendMessage({ role: "user", content: userContent(), timestamp: Date.now() }),
		assistant: () => {
			const [provider, model] = pick(MODELS);
			const content = [];
			if (chance(0.3)) content.push({ type: "thinking", thinking: text(), thinkingSignature: "sig" });
			if (chance(0.8)) content.push({ type: "text", text: text() });
			const calls = chance(0.4) ? int(1, 2) : 0;
			for (let i = 0; i < calls; i++) {
				const call = { type: "toolCall", id: `call_${++serial}`, name: pick(TOOLS).name, arguments: { path: text(2) } };
				content.push(call);
				pending.push(call);
			}
			const stopReason = chance(0.08) ? pick(["error", "aborted"]) : calls ? "toolUse" : "stop";
			const msg = { role: "assistant", content, api: "openai-completions", provider, model, usage: usage(), stopReason, timestamp: Date.now() };
			if (provider === "openrouter" && chance(0.5)) msg.responseModel = "anthropic/claude-haiku-4.5";
			if (stopReason === "error") msg.errorMessage = "overloaded";
			return m.appendMessage(msg);
		},
		toolResult: () => {
			const call = pending.length ? pending.shift() : { id: `orphan_${++serial}`, name: "read" };
			const content = chance(0.8) ? [{ type: "text", text: text(int(1, 30)) }] : [{ type: "text", text: text() }, { type: "image", data: "AA==", mimeType: "image/png" }];
			const msg = { role: "toolResult", toolCallId: call.id, toolName: call.name, content, isError: chance(0.1), timestamp: Date.now() };
			if (version16 && chance(0.1)) msg.usage = usage(); // a tool that called a model (a sub-agent)
			return m.appendMessage(msg);
		},
		bash: () => m.appendMessage({ role: "bashExecution", command: pick(["ls", "make test", "git status"]), output: chance(0.8) ? text() : "",
			exitCode: pick([0, 0, 1, null]), cancelled: chance(0.1), truncated: chance(0.1), fullOutputPath: chance(0.5) ? "/tmp/out.log" : undefined,
			excludeFromContext: chance(0.2), timestamp: Date.now() }),
		customMessage: () => m.appendCustomMessageEntry(`ext-${++serial}`, chance(0.5) ? text() : [{ type: "text", text: text() }], chance(0.7), chance(0.5) ? { n: serial } : undefined),
		custom: () => m.appendCustomEntry(`state-${++serial}`, { n: serial }),
		model: () => m.appendModelChange(...pick(MODELS)),
		thinking: () => m.appendThinkingLevelChange(pick(["off", "low", "high"])),
		info: () => m.appendSessionInfo(text(2)),
		label: () => {
			const ids = m.getEntries().map((e) => e.id);
			return ids.length ? m.appendLabelChange(pick(ids), chance(0.8) ? `label ${++serial}` : undefined) : null;
		},
		branch: () => {
			const ids = m.getEntries().map((e) => e.id);
			if (!ids.length) return null;
			if (chance(0.05)) m.resetLeaf();
			else m.branch(pick(ids));
			pending.length = 0;
			return null;
		},
		branchSummary: () => {
			const ids = m.getEntries().map((e) => e.id);
			if (!ids.length) return null;
			pending.length = 0;
			const summary = chance(0.9) ? `Branch summary ${++serial}: ${text()}` : "";
			return m.branchWithSummary(chance(0.05) ? null : pick(ids), summary, { readFiles: ["a.py"], modifiedFiles: [] }, chance(0.2),
				version16 && chance(0.6) ? usage() : undefined);
		},
		compaction: () => {
			const branch = m.getBranch();
			const cuts = branch.filter((e) => (e.type === "message" && ["user", "assistant", "bashExecution", "custom"].includes(e.message.role))
				|| e.type === "custom_message" || e.type === "branch_summary");
			if (!cuts.length) return null;
			const retainNone = version16 && chance(0.25);
			const kept = retainNone ? undefined : pick(cuts).id;
			const summary = `Compaction summary ${++serial}: ${text()}`;
			const details = { readFiles: ["a.py"], modifiedFiles: ["b.py"] };
			if (version16) return m.appendCompaction(summary, kept, int(1000, 90000), details, chance(0.2), chance(0.7) ? usage() : undefined);
			return m.appendCompaction(summary, kept ?? branch[branch.length - 1].id, int(1000, 90000), details, chance(0.2));
		},
		system: () => {
			const msg = { role: "system", content: chance(0.7) ? `You are pi ${++serial}. ${text()}` : chance(0.5) ? "" : [{ type: "text", text: text() }], timestamp: Date.now() };
			if (chance(0.6)) {
				msg.sections = {};
				for (const name of ["agents", "skills", "date"]) if (chance(0.5)) msg.sections[name] = chance(0.8) ? `${name}: ${text()}` : null;
			}
			if (chance(0.6)) msg.toolsAdded = TOOLS.filter(() => chance(0.4)).map((t) => ({ ...t, description: `${t.description} v${serial}` }));
			if (chance(0.3)) msg.toolsRemoved = TOOLS.filter(() => chance(0.3)).map((t) => ({ name: t.name }));
			return m.appendMessage(msg);
		},
		usage: () => m.appendUsage(pick(["cache_warm", "title"]), ...pick(MODELS), usage(), chance(0.5) ? text(3) : undefined),
		edit: () => {
			const editable = m.getBranch().filter((e) => e.type === "custom_message"
				|| (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)));
			if (!editable.length) return null;
			const target = pick(editable);
			const replacement = chance(0.35) ? null : chance(0.6) ? { content: `Edited ${++serial}: ${text()}` }
				: { content: [{ type: "text", text: `Edited ${++serial}: ${text()}` }] };
			return m.appendContextEdit(target.id, replacement);
		},
	};
	const weights16 = { user: 14, assistant: 16, toolResult: 10, bash: 2, customMessage: 3, custom: 1, model: 2, thinking: 2, info: 1,
		label: 3, branch: 6, branchSummary: 2, compaction: 4, system: 5, usage: 3, edit: 8 };
	const weights = version16 ? weights16 : Object.fromEntries(Object.entries(weights16).filter(([k]) => !["system", "usage", "edit"].includes(k)));
	const bag = Object.entries(weights).flatMap(([k, w]) => Array(w).fill(k));
	m.appendMessage({ role: "user", content: text(), timestamp: Date.now() });
	if (version16 && chance(0.8)) {
		m.appendMessage({ role: "system", content: `You are pi. ${text()}`, sections: { agents: "AGENTS.md: be brief" }, toolsAdded: TOOLS.slice(0, 4), timestamp: Date.now() });
	}
	for (let n = 0; m.getEntries().length < entriesWanted && n < entriesWanted * 4; n++) {
		const kind = pending.length && chance(0.7) ? "toolResult" : pick(bag);
		append[kind]();
	}
	if (version16) refusals.push(...tryRefusals(m));
	return m.getSessionFile();
}

/** Edits pi must refuse, tried on this tree; each with pi's error (none is written). */
function tryRefusals(m) {
	const out = [];
	const branch = m.getBranch();
	const onBranch = new Set(branch.map((e) => e.id));
	const userOnBranch = branch.find((e) => e.type === "message" && e.message.role === "user");
	const cases = [["unknown target", "nope1234", null], ["a bad replacement", userOnBranch?.id, "oops"],
		["content that is a number", userOnBranch?.id, { content: 42 }], ["no content", userOnBranch?.id, {}]];
	const sys = branch.find((e) => e.type === "message" && e.message.role === "system");
	if (sys) cases.push(["a system message", sys.id, null]);
	const meta = branch.find((e) => !["message", "custom_message"].includes(e.type));
	if (meta) cases.push([`a ${meta.type} entry`, meta.id, null]);
	const off = m.getEntries().find((e) => !onBranch.has(e.id) && e.type === "message" && e.message.role === "user");
	if (off) cases.push(["an entry on another branch", off.id, null]);
	for (const [what, targetId, replacement] of cases) {
		if (!targetId) continue;
		const before = m.getEntries().length;
		try {
			m.appendContextEdit(targetId, replacement);
			out.push({ file: m.getSessionFile(), leafId: m.getLeafId(), what, targetId, replacement, error: null });
		} catch (e) {
			out.push({ file: m.getSessionFile(), leafId: m.getLeafId(), what, targetId, replacement, error: String(e.message),
				written: m.getEntries().length !== before });
		}
	}
	return out;
}

/** pi's context at `leafId`: [entryId, pi's message, that message as pi sends it] for each
 * (0 for "as it is", null for "not sent"). */
function contextAt(entries, leafId, byId) {
	if (IS_16) {
		const projection = sm.buildSessionProjection(entries, leafId, byId);
		return projection.entries.flatMap((p) => p.messages.map((msg) => [p.sourceEntry.id, msg, sent(msg)]));
	}
	// 0.73.1 gives messages only: each is traced back to its entry by identity (a message entry's
	// message object, a custom message's content) or by its unique summary text.
	const { messages } = sm.buildSessionContext(entries, leafId, byId);
	const byObject = new Map();
	const bySummary = new Map();
	for (const e of entries) {
		if (e.type === "message") byObject.set(e.message, e.id);
		else if (e.type === "custom_message") byObject.set(`${e.customType}`, e.id);
		else if (e.type === "compaction") bySummary.set(`c:${e.summary}`, e.id);
		else if (e.type === "branch_summary") bySummary.set(`b:${e.summary}`, e.id);
	}
	return messages.map((msg) => {
		const id = byObject.get(msg) ?? (msg.role === "custom" ? byObject.get(`${msg.customType}`)
			: bySummary.get(`${msg.role === "compactionSummary" ? "c" : "b"}:${msg.summary}`));
		return [id ?? null, msg, sent(msg)];
	});
}

function sent(msg) {
	const llm = msgs.convertToLlm([msg])[0] ?? null;
	return llm !== null && JSON.stringify(llm) === JSON.stringify(msg) ? 0 : llm;
}

function readFile(file) {
	const m = sm.SessionManager.open(file);
	const entries = m.getEntries();
	const byId = new Map(entries.map((e) => [e.id, e]));
	const table = [];
	const index = new Map();
	const ref = (item) => {
		const key = JSON.stringify(item);
		if (!index.has(key)) {
			index.set(key, table.length);
			table.push(item);
		}
		return index.get(key);
	};
	const leaves = {};
	for (const e of entries) leaves[e.id] = contextAt(entries, e.id, byId).map(ref);
	return {
		activeLeaf: m.getLeafId(),
		active: contextAt(entries, m.getLeafId(), byId).map(ref),
		leaves,
		messages: table,
		breakdown: usageTotals ? usageTotals.getUsageCostBreakdown(entries) : null,
	};
}

if (mode === "write") {
	const [outDir, seed, count, size] = rest;
	rand = rng(Number(seed));
	mkdirSync(outDir, { recursive: true });
	const refusals = [];
	const files = [];
	for (let i = 0; i < Number(count); i++) files.push(writeTree(outDir, IS_16, Number(size), refusals));
	process.stdout.write(JSON.stringify({ files, refusals }));
} else if (mode === "read") {
	const out = {};
	const files = rest.length === 1 && !rest[0].endsWith(".jsonl") ? readdirSync(rest[0]).filter((f) => f.endsWith(".jsonl")).map((f) => join(rest[0], f)) : rest;
	for (const f of files) out[f] = readFile(f);
	process.stdout.write(JSON.stringify(out));
} else {
	process.stderr.write("usage: random_trees.mjs write PKG OUT SEED COUNT ENTRIES | read PKG FILE...\n");
	process.exit(2);
}
