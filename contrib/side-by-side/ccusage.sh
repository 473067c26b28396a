#!/usr/bin/env bash
# Bee and ccusage side by side on one home: for every agent both read,
# the token totals per day, and where they differ, by how much.
#
#   contrib/side-by-side/ccusage.sh [HOME]      (default: $HOME)
#
# ccusage is the pinned version the import benchmark uses (npm
# ccusage@20.0.24), installed into a temporary directory unless CCUSAGE
# names one. Bee imports into a temporary store (BEE_HOME), never into
# yours. Needs beectl on PATH (or BEECTL), npm, and python3.
set -euo pipefail
home="${1:-$HOME}"
beectl="${BEECTL:-beectl}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ccusage="${CCUSAGE:-}"
if [ -z "$ccusage" ]; then
  npm install --prefix "$work/ccusage" --no-audit --no-fund --loglevel=error ccusage@20.0.24 >/dev/null
  ccusage="$work/ccusage/node_modules/.bin/ccusage"
fi
export HOME="$home" BEE_HOME="$work/bee" TZ="${TZ:-UTC}"
"$beectl" ingest --json >/dev/null
# Bee's name for each agent, then ccusage's where it differs.
agents="claude codex gemini qwen opencode pi copilot amp droid goose kilo kimi codebuff hermes openclaw agy:antigravity"
for pair in $agents; do
  agent="${pair%%:*}" theirs="${pair#*:}"
  "$ccusage" "$theirs" daily --json --offline --timezone "$TZ" >"$work/ccusage-$agent.json" 2>/dev/null || echo '{}' >"$work/ccusage-$agent.json"
  "$beectl" usage --by day --provider "$agent" --since 2000-01-01 --json >"$work/bee-$agent.json" 2>/dev/null || echo '{}' >"$work/bee-$agent.json"
done
python3 - "$work" $agents <<'PY'
import json, sys, pathlib
work = pathlib.Path(sys.argv[1])
agents = [pair.split(":")[0] for pair in sys.argv[2:]]
columns = [("input", "inputTokens", "inputTokens"), ("cache writes", "cacheCreationTokens", "cacheCreationInputTokens"),
           ("cache reads", "cacheReadTokens", "cacheReadInputTokens"), ("output", "outputTokens", "outputTokens"),
           ("total", "totalTokens", "totalTokens")]
differences = 0
print(f"{'agent':<9} {'day':<11} {'column':<13} {'ccusage':>12} {'Bee':>12}")
for agent in agents:
    theirs = json.loads((work / f"ccusage-{agent}.json").read_text() or "{}")
    ours = json.loads((work / f"bee-{agent}.json").read_text() or "{}")
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
