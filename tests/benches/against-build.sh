#!/usr/bin/env bash
# A warm `beectl` command of this tree against the same command of an
# earlier build, in one script: each build writes its own ledger (the
# `ledger` bench's 500,000 calls and 500,000 responses, kept with
# BEE_BENCH_KEEP; a ledger's schema is its build's), then the two
# commands run in turns, after one untimed warm-up each, and the ratio of
# each pair (this build / the earlier) is reported: median and spread.
#
#   tests/benches/against-build.sh REV [ROUNDS] [-- beectl args]
#   tests/benches/against-build.sh 6311b81 11 -- usage --by day
#
# The earlier build is checked out in a worktree under $TMPDIR with a
# target directory of its own (two trees never share one: a shared one
# links one tree's crates into the other's); BEE_AGAINST_TARGET=DIR keeps
# that directory between runs.
set -euo pipefail

rev=${1:?usage: against-build.sh REV [ROUNDS] [-- beectl args]}
shift
rounds=11
if [[ $# -gt 0 && $1 != -- ]]; then rounds=$1; shift; fi
[[ ${1:-} == -- ]] && shift
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(usage --by day)

here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bee-against.XXXXXX")
trap 'git -C "$here" worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$here" worktree add --detach "$work/tree" "$rev" >/dev/null
# The earlier tree's bench may not keep its ledger yet: the same few lines
# as this tree's (it returns once the ledger is written).
bench="$work/tree/tests/benches/ledger.rs"
if ! grep -q BEE_BENCH_KEEP "$bench"; then
  python3 - "$bench" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
keep = """    drop(ledger);
    if let Some(keep) = std::env::var_os("BEE_BENCH_KEEP") {
        std::process::Command::new("cp").arg("-a").arg(home.path()).arg(&keep).status().unwrap();
        return;
    }
"""
text = text.replace("    drop(ledger);\n", keep, 1)
text = text.replace("    ingestion();\n", '    if std::env::var_os("BEE_BENCH_KEEP").is_none() {\n        ingestion();\n    }\n', 1)
open(path, "w").write(text)
EOF
fi

ledger_of() { # tree target home
  (cd "$1" && CARGO_TARGET_DIR=$2 BEE_BENCH_KEEP=$3 \
    cargo bench -q -p bee-tests --bench ledger >/dev/null)
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo build -q --release --bin beectl)
}
echo "building $rev and its ledger ..." >&2
before_target=${BEE_AGAINST_TARGET:-$work/target}
ledger_of "$work/tree" "$before_target" "$work/before"
echo "building this tree and its ledger ..." >&2
ledger_of "$here" "$here/target" "$work/after"

timed() { # beectl home -> ms
  local started ended
  started=$(date +%s%N)
  HOME=$2 BEE_HOME=$2 "$1" "${args[@]}" >/dev/null 2>&1 </dev/null
  ended=$(date +%s%N)
  echo $(((ended - started) / 1000000))
}
before=() after=()
timed "$before_target/release/beectl" "$work/before" >/dev/null
timed "$here/target/release/beectl" "$work/after" >/dev/null
for _ in $(seq "$rounds"); do
  before+=("$(timed "$before_target/release/beectl" "$work/before")")
  after+=("$(timed "$here/target/release/beectl" "$work/after")")
done
python3 - "$rev" "${args[*]}" "${before[*]}" "${after[*]}" <<'EOF'
import statistics, sys
rev, command, before, after = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
before, after = [int(x) for x in before], [int(x) for x in after]
ratios = [a / b for a, b in zip(after, before)]
print(f"beectl {command}, {len(ratios)} rounds in turns:")
print(f"  {rev:>12}  median {statistics.median(before)} ms (min {min(before)}, max {max(before)})")
print(f"  {'this tree':>12}  median {statistics.median(after)} ms (min {min(after)}, max {max(after)})")
print(f"  ratio this/{rev}: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
EOF
