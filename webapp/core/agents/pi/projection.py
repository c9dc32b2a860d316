"""pi's lines as entry rows, in one SQL projection that DuckDB runs over a batch of files
(`corpus.lines.lines_table`, run by `corpus.columns`): every JSON line parsed in C++ (for its
fields' types, then for their values and its content blocks), outside the GIL, each field the
corpus tables hold taken out in bulk, as pi's reader (`reader.PiReader`,
the core's `entries`) reads it from the same line. It lives in pi's room because it is pi's
vocabulary: the SQL is text here (no DuckDB imported), the registry names it (`Agent.projection`).

The projection reads a line as the seam does only where the line is as pi writes it: an object
with a string id and a `parentId` key, fields of the types pi writes them in. It says so per
line (`plain`); a file with one line that is not plain is read by the seam itself
(`corpus.extract.extract`), which reports and mends what the projection does not try to: damaged
lines, duplicate ids, pi v1's lines without ids, fields of the wrong type. A line whose JSON
DuckDB accepts where orjson may not (NaN, a trailing comma, a huge exponent, very deep nesting)
is `suspect`: it is parsed again by orjson, and the file goes to the seam if that fails.

`tests/corpus/test_projection.py` compares every column of these rows with the seam's."""

from __future__ import annotations

import json
from functools import cache

from ...entry_types import REQUIRED_FIELDS
from ..tools import action_tables

# The JSON paths whose type is read from every line (`json_type`, in the order of the list DuckDB
# extracts them into), and those whose value is (as text: a string's value, any other value's
# JSON, as `json_extract_string` gives them), each with one parse of the line; the types of the
# fields only lines other than messages hold are read from those lines alone (OTHER_TYPED). Each
# path looked up costs about a fifth of a parse.
_USAGE = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
TYPED = ("type", "id", "parentId", "timestamp", "message.role", "message.model", "message.toolName",
         "message.toolCallId", "message.isError", *(f"message.usage.{k}" for k in (*_USAGE, "estimated", "cost.total")))
VALUED = (*TYPED[:-7], "message.stopReason", *TYPED[-7:])
OTHER_VALUED = ("modelId", "targetId", "usage.cost.total", "details.usage.cost.total", "tokensBefore", "tokensAfter")
OTHER_TYPED = (*OTHER_VALUED, "usage", "replacementHistory",
               *sorted({f for fields in REQUIRED_FIELDS.values() for f in fields} - {"message", *OTHER_VALUED}))
# The values come out of one `json_transform` into a struct of VARCHAR (which reads a value as
# `json_extract_string` does, the first of two equal keys too), with the content blocks of a
# message (or a custom message), each block's fields as JSON text: the blocks come out of the
# same parse as a list, the content is never copied as text (only a call's arguments are).
_BLOCKS = [{"type": "JSON", "id": "JSON", "name": "JSON", "arguments": "JSON"}]


def _values_shape() -> str:
    shape: dict = {"message": {"content": _BLOCKS}, "content": _BLOCKS}
    for path in (*VALUED, *OTHER_VALUED):
        *parents, name = path.split(".")
        node = shape
        for parent in parents:
            node = node.setdefault(parent, {})
        node[name] = "VARCHAR"
    return json.dumps(shape, separators=(",", ":"))


# An ISO-8601 time as `datetime.fromisoformat` reads it and this projection does too; another
# string (a date alone, a week date) is left to the seam. The form pi writes (milliseconds, UTC)
# is told by a pattern without groups and read by `strptime`, at a quarter of the cost of `_TIME`.
_TIME = r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})?"
_PI_TIME = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"
# JSON that DuckDB reads and orjson refuses, looked for cheaply (a substring, not a pattern: a
# pattern with digits in it cost as much as the parse): NaN, Infinity, a comma before a closing
# bracket, nesting deeper than orjson reads (1,024; more than DEEP brackets in a line). A number
# beyond a double's range is not looked for: no agent writes one.
DEEP = 900


def _macros() -> list[str]:
    return [
        # a JSON integer as Python reads it exactly (one of more digits is left to the seam)
        "CREATE OR REPLACE MACRO int_ok(t, v) AS t IS NULL OR t NOT IN ('UBIGINT', 'BIGINT') OR strlen(v) <= 15",
        # (try_cast: one beyond 64 bits, which `int_ok` leaves to the seam, must not fail the batch)
        "CREATE OR REPLACE MACRO as_int(t, v) AS CASE WHEN t IN ('UBIGINT', 'BIGINT') THEN try_cast(v AS BIGINT) END",
        # a number Python reads as a float (a bool is an int to isinstance: left to the seam)
        "CREATE OR REPLACE MACRO as_float(t, v) AS CASE WHEN t IN ('UBIGINT', 'BIGINT', 'DOUBLE') THEN v::DOUBLE "
        "ELSE 0.0 END",
        # a field read with `as_key`: a string, or nothing (anything else reads as its JSON text)
        "CREATE OR REPLACE MACRO key_ok(t) AS t IS NULL OR t IN ('NULL', 'VARCHAR')",
        # content blocks as `fields.message_ok` wants them: each an object with a string type
        # (a bare value, which the seam reads as text, is left to it too)
        "CREATE OR REPLACE MACRO blocks_ok(bl) AS bl IS NULL OR coalesce(list_bool_and(list_transform(bl, "
        "lambda b: coalesce(b IS NOT NULL AND starts_with(b.type::VARCHAR, '\"'), false))), true)",
        "CREATE OR REPLACE MACRO has_calls(bl) AS coalesce(list_contains(list_transform(bl, lambda b: b.type::VARCHAR), "
        "'\"toolCall\"'), false)",
        # a string's value from its JSON text as DuckDB writes it (an escape is written with a
        # backslash, nothing else is: the text between the quotes is the value)
        "CREATE OR REPLACE MACRO jstr(x) AS CASE WHEN starts_with(x, '\"') THEN CASE WHEN contains(x, '\\') "
        "THEN json_extract_string(x, '$') ELSE x[2:-2] END END",
        "CREATE OR REPLACE MACRO is_str(x) AS coalesce(starts_with(x, '\"'), false)",
    ]


@cache
def entries_sql() -> str:
    """Every line of the batch `lines` after the first (the header, read by Python) as a row, in
    the order of `lines`: its `kind` (0 an object; 2 not one, which Python tells blank or
    damaged), whether it is `plain` and `suspect`, and the entry's columns as the seam reads them
    (its facts, its `entries` table columns). A line without `parentId` (pi v1) is `chained` to
    the entry before it (Python links it), and one without `id` is named by its line, as
    `PiReader.entry` does. A message with tool calls keeps its content `blocks` for `calls_sql`
    (and its content's JSON where a call's id or name is null or absent, which the blocks do not
    tell apart)."""
    k = {**{p: f"k[{i + 1}]" for i, p in enumerate(TYPED)}, **{p: f"ok[{i + 1}]" for i, p in enumerate(OTHER_TYPED)}}
    v = {p: "s." + ".".join(f'"{name}"' for name in p.split(".")) for p in (*VALUED, *OTHER_VALUED)}
    typed, other_typed = (", ".join(f"'$.{p}'" for p in paths) for paths in (TYPED, OTHER_TYPED))
    usage_ok = " AND ".join(f"coalesce({k[f'message.usage.{u}']}, '') NOT IN ('DOUBLE', 'BOOLEAN') "
                            f"AND int_ok({k[f'message.usage.{u}']}, {v[f'message.usage.{u}']})" for u in _USAGE)
    ints = {u: f"as_int({k[f'message.usage.{u}']}, {v[f'message.usage.{u}']})" for u in _USAGE}
    summary_ok = " AND ".join(f"coalesce({k[f]}, '') <> 'BOOLEAN'" for f in ("usage.cost.total", "details.usage.cost.total",
                                                                              "tokensBefore", "tokensAfter")) \
        + f" AND int_ok({k['tokensBefore']}, {v['tokensBefore']}) AND int_ok({k['tokensAfter']}, {v['tokensAfter']})"
    missing = " WHEN ".join(
        f"type = '{kind}' THEN list_filter([{', '.join(f'CASE WHEN {k[f]} IS NULL THEN {f!r} END' for f in fields)}], "
        "lambda x: x IS NOT NULL)"
        for kind, fields in REQUIRED_FIELDS.items() if kind != "message" and fields)
    return f"""
WITH x AS (
  SELECT fileno, line, j, k, CASE WHEN k IS NOT NULL THEN json_transform(j, '{_values_shape()}') END AS s
  FROM (SELECT *, CASE WHEN starts_with(j, '{{') THEN try(json_type(j, [{typed}])) END AS k
        FROM (SELECT fileno, line, try(decode(raw)) AS j FROM lines WHERE line > 1))
), y AS (
  SELECT fileno, line, j, k, s,
    CASE WHEN {k['type']} = 'VARCHAR' THEN {v['type']} END AS type,
    CASE WHEN {k['message.role']} = 'VARCHAR' THEN {v['message.role']} END AS role,
    contains(j, 'NaN') OR contains(j, 'Infinity') OR contains(j, ',]') OR contains(j, ',}}')
      OR CASE WHEN strlen(j) > {2 * DEEP} THEN strlen(j) - strlen(replace(replace(j, '{{', ''), '[', '')) > {DEEP} END
      AS suspect,  -- (a CASE counts the brackets of long lines alone: an AND would count every line's)
    CASE WHEN {k['timestamp']} = 'VARCHAR' THEN {v['timestamp']} END AS time
  FROM x
), z AS (
  SELECT *,
    -- (a message's `message` is there where its role is; the fields only other lines hold)
    CASE WHEN type IS DISTINCT FROM 'message' THEN NULL WHEN {k['message.role']} IS NOT NULL THEN false
         ELSE json_type(j, '$.message') IS NULL END AS no_message,
    CASE WHEN type <> 'message' THEN json_type(j, [{other_typed}]) END AS ok,
    CASE WHEN type = 'message' THEN s.message.content WHEN type = 'custom_message' THEN s.content END AS blocks,
    regexp_full_match(time, '{_PI_TIME}') AS pi_time,
    CASE WHEN NOT pi_time THEN regexp_extract(time, '^{_TIME}$', ['y', 'mo', 'd', 'h', 'mi', 's', 'f', 'z']) END AS ts
  FROM y
), t AS (
  SELECT *,
    CASE WHEN pi_time THEN try_strptime(time, '%Y-%m-%dT%H:%M:%S.%gZ')
         WHEN ts.y <> '' THEN try_strptime(ts.y || '-' || ts.mo || '-' || ts.d || 'T' || ts.h || ':' || ts.mi
                                           || ':' || ts.s, '%Y-%m-%dT%H:%M:%S') END AS naive,
    CASE WHEN pi_time OR ts.z IN ('', 'Z') THEN 0 ELSE (CASE WHEN starts_with(ts.z, '-') THEN -1 ELSE 1 END)
         * (substr(ts.z, 2, 2)::INTEGER * 3600 + substr(ts.z, 5, 2)::INTEGER * 60) END AS offset_s,
    type = 'message' AND role = 'assistant' AS assistant,
    type = 'message' AND role = 'toolResult' AS result,
    type = 'message' AND has_calls(blocks) AS calls
  FROM z
)
SELECT fileno, line, CASE WHEN k IS NULL THEN 2 ELSE 0 END AS kind,
  k IS NOT NULL AND coalesce(({k['type']} IN ('NULL', 'VARCHAR') OR {k['type']} IS NULL)
  AND ({k['id']} IS NULL OR ({k['id']} = 'VARCHAR' AND {v['id']} <> ''))
  AND (time IS NULL OR (naive IS NOT NULL AND CASE WHEN pi_time THEN time >= '1000' ELSE ts.y >= '1000' END
                        AND abs(offset_s) < 86400))
  AND CASE type
    WHEN 'message' THEN
      ({k['message.role']} IS NULL OR ({k['message.role']} = 'VARCHAR' AND role <> 'hookMessage'))
      AND ({k['message.toolCallId']} IS NULL OR {k['message.toolCallId']} = 'VARCHAR')
      AND blocks_ok(blocks)
      -- (a reply's fields and a tool result's are checked in a CASE, on those lines alone: both
      -- sides of an OR are worked out on every line)
      AND CASE WHEN assistant THEN key_ok({k['message.model']}) AND {usage_ok}
                 AND coalesce({k['message.usage.estimated']}, 'NULL') IN ('NULL', 'BOOLEAN')
                 AND coalesce({k['message.usage.cost.total']}, '') <> 'BOOLEAN'
               WHEN result THEN key_ok({k['message.toolName']})
                 AND coalesce({k['message.isError']}, 'NULL') IN ('NULL', 'BOOLEAN')
                 AND coalesce({k['message.usage.cost.total']}, '') <> 'BOOLEAN'
               ELSE true END
    WHEN 'custom_message' THEN blocks_ok(blocks) AND NOT has_calls(blocks)
    WHEN 'compaction' THEN {k['replacementHistory']} IS NULL AND {summary_ok}
    WHEN 'branch_summary' THEN {summary_ok}
    WHEN 'usage' THEN coalesce({k['usage.cost.total']}, '') <> 'BOOLEAN'
    WHEN 'model_change' THEN key_ok({k['modelId']})
    WHEN 'leaf' THEN key_ok({k['targetId']})
    WHEN 'label' THEN key_ok({k['targetId']})
    ELSE true END, false) AS plain,
  coalesce(suspect, false) AS suspect,
  CASE WHEN {k['id']} IS NULL THEN 'L' || line ELSE {v['id']} END AS entry_id,
  {k['id']} IS NULL AS generated,
  CASE WHEN {k['parentId']} = 'VARCHAR' AND {v['parentId']} <> '' THEN {v['parentId']} END AS parent_id,
  {k['parentId']} IS NULL AS chained,
  type, CASE WHEN type = 'message' THEN role END AS role,
  -- (an offset in microseconds is beyond an INTEGER's range)
  epoch_us(naive) + CASE WHEN pi_time THEN 0 ELSE coalesce(rpad(ts.f, 6, '0')::BIGINT, 0) END
    - offset_s::BIGINT * 1000000 AS time_us,
  CASE WHEN assistant AND {k['message.model']} = 'VARCHAR' THEN {v['message.model']}
       WHEN type = 'model_change' AND {k['modelId']} = 'VARCHAR' THEN {v['modelId']} END AS model,
  -- (a reply's usage is read where `message.usage` is an object: where it is not, none of its
  -- fields is found, and each figure below is NULL, as it is then)
  CASE WHEN NOT assistant
         OR coalesce({v['message.usage.estimated']}, '') = 'true'
         OR coalesce({v['message.stopReason']}, '') IN ('aborted', 'error') THEN NULL
       WHEN {ints['totalTokens']} > 0 THEN {ints['totalTokens']}
       ELSE nullif(coalesce({ints['input']}, 0) + coalesce({ints['output']}, 0) + coalesce({ints['cacheRead']}, 0)
                   + coalesce({ints['cacheWrite']}, 0), 0) END AS usage_tokens,
  CASE WHEN assistant
         AND ({ints['input']} IS NOT NULL OR {ints['cacheRead']} IS NOT NULL OR {ints['cacheWrite']} IS NOT NULL)
       THEN coalesce({ints['input']}, 0) + coalesce({ints['cacheRead']}, 0) + coalesce({ints['cacheWrite']}, 0)
       END AS input_tokens,
  CASE WHEN assistant THEN {ints['output']} END AS output_tokens,
  CASE WHEN assistant THEN {ints['cacheRead']} END AS cache_read_tokens,
  CASE WHEN assistant THEN {ints['cacheWrite']} END AS cache_write_tokens,
  -- (what a call cost: a reply's, a tool's that called a model, a summary's own `usage` or the
  -- `details.usage` session-tree once wrote, a pi 1.6 `usage` entry's: `entries.spent_usage`)
  CASE WHEN assistant OR result THEN as_float({k['message.usage.cost.total']}, {v['message.usage.cost.total']})
       WHEN type IN ('compaction', 'branch_summary', 'usage') AND {k['usage']} = 'OBJECT'
       THEN as_float({k['usage.cost.total']}, {v['usage.cost.total']})
       WHEN type IN ('compaction', 'branch_summary')
       THEN as_float({k['details.usage.cost.total']}, {v['details.usage.cost.total']})
       ELSE 0.0 END AS cost,
  CASE WHEN result AND {k['message.toolName']} = 'VARCHAR' THEN {v['message.toolName']} END AS tool_name,
  CASE WHEN result AND {k['message.toolCallId']} = 'VARCHAR' THEN {v['message.toolCallId']} END AS call_id,
  coalesce(result AND {v['message.isError']} = 'true', false) AS is_error,
  CASE WHEN type IN ('leaf', 'label') AND {k['targetId']} = 'VARCHAR' THEN {v['targetId']} END AS target_id,
  CASE WHEN type = 'message' THEN CASE WHEN no_message THEN ['message'] ELSE [] END
       WHEN {missing} ELSE [] END AS missing,
  CASE WHEN type IN ('compaction', 'branch_summary') THEN as_int({k['tokensBefore']}, {v['tokensBefore']}) END AS tokens_before,
  CASE WHEN type IN ('compaction', 'branch_summary') THEN as_int({k['tokensAfter']}, {v['tokensAfter']}) END AS tokens_after,
  calls AS has_calls,
  CASE WHEN calls THEN blocks END AS blocks,
  CASE WHEN calls AND list_bool_or(list_transform(blocks, lambda b: b.type::VARCHAR = '"toolCall"'
                                                                    AND (b.id IS NULL OR b.name IS NULL)))
       THEN json_extract(j, '$.message.content') END AS content
FROM t
"""


@cache
def calls_sql() -> str:
    """The toolCall blocks of the messages of `entries` (the rows above, `has_calls`), in order:
    each block's id and name as `tool_calls` and the facts read them, whether they are sound,
    and what `tools.tool_action` makes of them (`action`: 'python' where it reads more than a
    string: a command given as a list of words, a patch). A block's id or name that the blocks
    hold as NULL (null or absent) is read again from the content's JSON, which tells them apart."""
    file_tools, shell_tools, patch_tools = action_tables()
    keys = arg_keys()
    at = {k: i + 1 for i, k in enumerate(keys)}
    arg_paths = ", ".join(f"'$.{k}'" for k in keys)
    whens = []
    for name, (kind, path_keys) in file_tools.items():
        first = " ".join(f"WHEN is_str(a[{at[k]}]) THEN {{'kind': '{kind}', 'target': jstr(a[{at[k]}])}}"
                         for k in path_keys)
        whens.append(f"WHEN {_quoted(name)} THEN CASE {first} ELSE {{'kind': 'other', 'target': NULL}} END")
    for name, key in shell_tools.items():
        whens.append(f"WHEN {_quoted(name)} THEN CASE WHEN is_str(a[{at[key]}]) THEN {{'kind': 'bash', 'target': "
                     f"jstr(a[{at[key]}])}} WHEN starts_with(a[{at[key]}], '[') THEN {{'kind': 'python', 'target': NULL}} "
                     "ELSE {'kind': 'other', 'target': NULL} END")
    for name in patch_tools:
        whens.append(f"WHEN {_quoted(name)} THEN CASE WHEN is_str(a[{at['input']}]) OR is_str(a[{at['patch']}]) "
                     "THEN {'kind': 'python', 'target': NULL} ELSE {'kind': 'other', 'target': NULL} END")
    exact = {f: f"CASE WHEN u.b.{f} IS NULL AND u.content IS NOT NULL "
                f"THEN json_extract(u.content, '$[' || (u.idx - 1) || '].{f}') ELSE u.b.{f} END" for f in ("id", "name")}
    return f"""
WITH b AS (
  SELECT u.fileno, u.line, u.entry_id, u.role, u.idx,
    [u.b.type, {exact['id']}, {exact['name']}, u.b.arguments]::VARCHAR[] AS f
  FROM (SELECT fileno, line, entry_id, role, content, unnest(blocks) AS b, generate_subscripts(blocks, 1) AS idx
        FROM entries WHERE has_calls) u
  WHERE u.b.type::VARCHAR = '"toolCall"'
), c AS (
  SELECT *, CASE WHEN starts_with(f[4], '{{') THEN json_extract(f[4], [{arg_paths}])::VARCHAR[] END AS a,
    jstr(f[3]) AS name  -- (once: a CASE on it compares it with each tool's name)
  FROM b
), d AS (
  SELECT *,
    CASE WHEN a IS NULL OR NOT is_str(f[3]) THEN {{'kind': 'other', 'target': NULL}}
         ELSE CASE name {' '.join(whens)} ELSE {{'kind': 'other', 'target': NULL}} END END AS action
  FROM c
)
SELECT fileno, line, entry_id, role, idx,
  (f[2] IS NULL OR is_str(f[2])) AND (f[3] IS NULL OR is_str(f[3])) AS sound,
  -- (an upper bound counted first, in a CASE: an AND would make every call's structure)
  coalesce(CASE WHEN (starts_with(f[4], '{{') OR starts_with(f[4], '['))
                     AND strlen(f[4]) - strlen(replace(replace(f[4], '{{', ''), '[', '')) > 90
                THEN strlen(json_structure(f[4])) - strlen(replace(replace(json_structure(f[4]), '{{', ''), '[', '')) > 90
                END, false) AS deep,
  coalesce(jstr(f[2]), '') AS id, name, action.kind AS kind, action.target AS target,
  CASE WHEN action.kind = 'python' THEN a END AS args
FROM d
"""


@cache
def arg_keys() -> tuple[str, ...]:
    """The arguments `tools.tool_action` reads a path or a command from, in the order `calls_sql`
    hands their JSON to Python (`args`)."""
    file_tools, shell_tools, _ = action_tables()
    return tuple(sorted({k for _, path_keys in file_tools.values() for k in path_keys} | set(shell_tools.values())
                        | {"input", "patch"}))


def _quoted(name: str) -> str:
    return "'" + name.replace("'", "''") + "'"


def macros() -> list[str]:
    """The macros the projections use, made once on each connection that runs them."""
    return _macros()
