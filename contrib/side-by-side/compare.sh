#!/usr/bin/env bash
# Bee, ccusage and tokscale side by side on one home: every agent's token
# totals from each tool that reads it, then, for every agent Bee and
# ccusage both read, the totals per day where they differ.
#
#   contrib/side-by-side/compare.sh [HOME]      (default: $HOME)
#
# The other tools are the pinned versions (npm ccusage@20.0.24, the one
# the import benchmark uses, and @tokscale/cli-linux-x64-gnu@4.17.0),
# installed into a temporary directory unless CCUSAGE or TOKSCALE names
# one; TOOLS=ccusage leaves tokscale out (what ccusage.sh does). Each runs
# offline (ccusage --offline, TOKSCALE_PRICING_CACHE_ONLY=1), tokscale
# with a temporary HOME of its own for its settings and cache, reading the
# home with --home. Bee imports into a temporary store (BEE_HOME), never
# into yours. Needs beectl on PATH (or BEECTL: `cargo build -p beectl`,
# target/debug/beectl), npm, and python3.
#
# A home holding every agent's records to run it on:
#   cargo run -p bee-tests --example every_agent_home -- DIR
set -euo pipefail
home="$(cd "${1:-$HOME}" && pwd)"
beectl="${BEECTL:-beectl}"
tools="${TOOLS:-ccusage,tokscale}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export TZ="${TZ:-UTC}"
# A home named is read alone: every variable that moves an agent's
# records elsewhere is unset (the tests' list). Yours are kept for yours.
[ $# -eq 0 ] || unset CLAUDE_CONFIG_DIR CODEX_HOME BEE_CLAUDE_PROJECTS BEE_CODEX_SESSIONS GEMINI_CLI_HOME QWEN_HOME \
  QWEN_RUNTIME_DIR PI_CODING_AGENT_DIR OPENCODE_DB XDG_DATA_HOME XDG_CONFIG_HOME COPILOT_HOME \
  COPILOT_OTEL_FILE_EXPORTER_PATH KIMI_SHARE_DIR OPENCLAW_STATE_DIR OPENCLAW_HOME OPENCLAW_CONFIG_PATH \
  OPENCLAW_PROFILE OPENCLAW_AGENT_DIR OPENCLAW_WORKSPACE_DIR GOOSE_PATH_ROOT HERMES_HOME CRUSH_GLOBAL_DATA \
  CONTINUE_GLOBAL_DIR JUNIE_HOME CLINE_DIR CLINE_DATA_DIR CLINE_SESSION_DATA_DIR AIDER_ANALYTICS_LOG MUX_ROOT \
  XUM_ROOT MEEPT_HOME REASONIX_STATE_HOME REASONIX_HOME LINGTAI_HOME LINGTAI_TUI_HOME KIMI_CODE_HOME MIMOCODE_HOME \
  MIMOCODE_DB OPENCLAUDE_CONFIG_DIR PI_CONFIG_DIR VIBE_HOME GEMINI_TELEMETRY_OUTFILE KILO_DB KIRO_HOME XDG_STATE_HOME BEE_RUN_PROVIDER
# Bee answers from its temporary store alone, never from a running beed.
unset BEE_SOCKET
install() { npm install --prefix "$work/$1" --no-audit --no-fund --loglevel=error "$2" >/dev/null; }
ccusage="${CCUSAGE:-}"
if [ -z "$ccusage" ]; then
  install ccusage ccusage@20.0.24
  ccusage="$work/ccusage/node_modules/.bin/ccusage"
fi
tokscale="${TOKSCALE:-}"
if [ -z "$tokscale" ] && [[ ",$tools," == *,tokscale,* ]]; then
  install tokscale @tokscale/cli-linux-x64-gnu@4.17.0
  tokscale="$work/tokscale/node_modules/@tokscale/cli-linux-x64-gnu/bin/tokscale"
fi

# Bee: every agent at once, and each by day.
bee() { HOME="$home" BEE_HOME="$work/bee" "$beectl" "$@"; }
bee ingest --json >/dev/null
bee agents --json >"$work/bee-agents.json"
bee usage --by agent --since 2000-01-01 --json >"$work/bee.json"
# Bee's name for each agent ccusage reads, then ccusage's where it differs.
ccusage_agents="claude codex gemini qwen opencode pi copilot amp droid goose kilo kimi codebuff hermes openclaw agy:antigravity zcode"
for pair in $ccusage_agents; do
  agent="${pair%%:*}" theirs="${pair#*:}"
  HOME="$home" "$ccusage" "$theirs" daily --json --offline --timezone "$TZ" >"$work/ccusage-$agent.json" 2>/dev/null ||
    echo '{}' >"$work/ccusage-$agent.json"
  bee usage --by day --agent "$agent" --since 2000-01-01 --json >"$work/bee-$agent.json" 2>/dev/null ||
    echo '{}' >"$work/bee-$agent.json"
done
if [ -n "$tokscale" ]; then
  mkdir -p "$work/tokscale-home"
  HOME="$work/tokscale-home" TOKSCALE_PRICING_CACHE_ONLY=1 \
    "$tokscale" --home "$home" --json --group-by client,model --no-spinner >"$work/tokscale.json"
else
  echo '{}' >"$work/tokscale.json"
fi

python3 - "$work" $ccusage_agents <<'PY'
import json, sys, pathlib
work = pathlib.Path(sys.argv[1])
ccusage_agents = [pair.split(":")[0] for pair in sys.argv[2:]]
load = lambda name: json.loads((work / name).read_text() or "{}")

# tokscale's client names that are not Bee's agent names. Its other clients
# Bee does not read (or reads under the same name).
TOKSCALE_NAMES = {"roocode": "roo", "antigravity-cli": "agy", "devin-cli": "devin", "micode": "mimo"}
COLUMNS = ["input", "cache writes", "cache reads", "output", "reasoning", "total", "responses"]

# agent -> tool -> [input, writes, reads, output, of which reasoning, total, responses]
totals = {}
for row in load("bee.json").get("rows", []):
    t = row.get("tokens", {})
    totals.setdefault(row["agent"], {})["Bee"] = [t.get("inputTokens"), t.get("cacheCreationInputTokens"),
        t.get("cacheReadInputTokens"), t.get("outputTokens"), t.get("reasoningOutputTokens"), t.get("totalTokens"),
        row.get("responses")]
for agent in ccusage_agents:
    t = load(f"ccusage-{agent}.json").get("totals")
    # No record read: ccusage answers with totals of 0.
    if t and any(t.get(k) for k in ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "outputTokens")):
        count = sum(d.get("messageCount", 0) for d in load(f"ccusage-{agent}.json").get("daily", []))
        totals.setdefault(agent, {})["ccusage"] = [t.get("inputTokens"), t.get("cacheCreationTokens"),
            t.get("cacheReadTokens"), t.get("outputTokens"), None, t.get("totalTokens"), count or None]
for entry in load("tokscale.json").get("entries", []):
    agent = TOKSCALE_NAMES.get(entry["client"], entry["client"])
    row = totals.setdefault(agent, {}).setdefault("tokscale", [0] * 7)
    # tokscale's own total: its four columns; its reasoning is shown apart
    # and left out of the total, whether its output holds it or not.
    parts = [entry["input"], entry["cacheWrite"], entry["cacheRead"], entry["output"]]
    for i, value in enumerate(parts + [entry["reasoning"], sum(parts), entry["messageCount"]]):
        row[i] += value

known = [a["agent"] for a in load("bee-agents.json").get("agents", [])]
order = known + sorted(set(totals) - set(known))
show = lambda v: "-" if v is None else str(v)
print(f"{'agent':<16} {'tool':<9} " + " ".join(f"{c:>12}" for c in COLUMNS))
for agent in order:
    tools = totals.get(agent, {})
    label = agent if agent in known else f"{agent} (not Bee's)"
    for tool in ("Bee", "ccusage", "tokscale"):
        if tool in tools:
            figures = tools[tool]
            same = tool != "Bee" and "Bee" in tools and [figures[i] or 0 for i in (0, 1, 2, 3, 5)] == [tools["Bee"][i] or 0 for i in (0, 1, 2, 3, 5)]
            print(f"{label:<16} {tool:<9} " + " ".join(f"{show(v):>12}" for v in figures) + ("  =" if same else ""))
            label = ""
print("(tokens; a tool's row is absent where it reads none of the agent's records; '=' marks tokens equal to Bee's;")
print(" Bee's reasoning is a part of its output; tokscale's reasoning is apart and not in its total, as tokscale")
print(" itself totals; '-' is a count the tool does not give, or one Bee holds as unknown)")

print()
print("Bee and ccusage per day, where they differ:")
columns = [("input", "inputTokens", "inputTokens"), ("cache writes", "cacheCreationTokens", "cacheCreationInputTokens"),
           ("cache reads", "cacheReadTokens", "cacheReadInputTokens"), ("output", "outputTokens", "outputTokens"),
           ("total", "totalTokens", "totalTokens")]
differences = 0
print(f"{'agent':<9} {'day':<11} {'column':<13} {'ccusage':>12} {'Bee':>12}")
for agent in ccusage_agents:
    theirs = load(f"ccusage-{agent}.json")
    ours = load(f"bee-{agent}.json")
    their_days = {d.get("date"): d for d in theirs.get("daily", [])}
    our_days = {r.get("key"): r.get("tokens", {}) for r in ours.get("rows", [])}
    for day in sorted(set(their_days) | set(our_days)):
        for name, their_field, our_field in columns:
            a = their_days.get(day, {}).get(their_field)
            b = our_days.get(day, {}).get(our_field)
            if (a or 0) != (b or 0):
                differences += 1
                print(f"{agent:<9} {day:<11} {name:<13} {str(a):>12} {str(b):>12}")
print(f"{differences} differences" if differences else "equal wherever both read the agent")
PY
