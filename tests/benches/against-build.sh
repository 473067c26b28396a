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
# Start-up, with no ledger (BEE_AGAINST_LEDGER=0: an empty home), any of
# the three binaries (BEE_AGAINST_BIN) and its stdin from a file
# (BEE_AGAINST_STDIN):
#   BEE_AGAINST_LEDGER=0 tests/benches/against-build.sh 327fd67 41 -- --version
#   BEE_AGAINST_LEDGER=0 BEE_AGAINST_BIN=bee-hook BEE_AGAINST_STDIN=prompt.json \
#     tests/benches/against-build.sh 327fd67 41 -- prompt
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
binary=${BEE_AGAINST_BIN:-beectl}
stdin=${BEE_AGAINST_STDIN:-/dev/null}
with_ledger=${BEE_AGAINST_LEDGER:-1}

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
  if [[ $with_ledger == 1 ]]; then
    (cd "$1" && CARGO_TARGET_DIR=$2 BEE_BENCH_KEEP=$3 \
      cargo bench -q -p bee-tests --bench ledger >/dev/null)
  else
    mkdir -p "$3"
  fi
  (cd "$1" && CARGO_TARGET_DIR=$2 cargo build -q --release --bins)
}
echo "building $rev and its ledger ..." >&2
before_target=${BEE_AGAINST_TARGET:-$work/target}
ledger_of "$work/tree" "$before_target" "$work/before"
echo "building this tree and its ledger ..." >&2
ledger_of "$here" "$here/target" "$work/after"

ls -l "$before_target/release/beed" "$before_target/release/bee-hook" "$before_target/release/beectl" \
  "$here/target/release/beed" "$here/target/release/bee-hook" "$here/target/release/beectl" >&2
# Timed from Python (perf_counter around each run), the two builds in turns.
python3 - "$rev" "$rounds" "$stdin" "$before_target/release/$binary" "$work/before" \
  "$here/target/release/$binary" "$work/after" "${args[@]}" <<'EOF'
import os, statistics, subprocess, sys, time
rev, rounds, stdin, before_bin, before_home, after_bin, after_home, *args = sys.argv[1:]

def timed(binary, home):
    env = dict(os.environ, HOME=home, BEE_HOME=home)
    with open(stdin, "rb") as source:
        started = time.perf_counter_ns()
        subprocess.run([binary, *args], stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        return (time.perf_counter_ns() - started) / 1e6

timed(before_bin, before_home), timed(after_bin, after_home)  # one untimed warm-up each
before, after = [], []
for _ in range(int(rounds)):
    before.append(timed(before_bin, before_home))
    after.append(timed(after_bin, after_home))
ratios = [a / b for a, b in zip(after, before)]
command = " ".join([os.path.basename(after_bin), *args])
print(f"{command}, {len(ratios)} rounds in turns:")
print(f"  {rev:>12}  median {statistics.median(before):.2f} ms (min {min(before):.2f}, max {max(before):.2f})")
print(f"  {'this tree':>12}  median {statistics.median(after):.2f} ms (min {min(after):.2f}, max {max(after):.2f})")
print(f"  ratio this/{rev}: median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
EOF
