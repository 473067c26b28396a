#!/usr/bin/env python3
"""Regenerates Bee's bundled price table (daemon/src/ledger/views/prices.json)
from a LiteLLM wheel, so the table is reproducible from a named release.

    pip download litellm==1.110.2 --no-deps -d /tmp/litellm
    contrib/prices/update.py /tmp/litellm/litellm-1.110.2-*.whl --released 2026-11-20

`--released` is the day the version was published on PyPI (the wheel does
not carry it): the `upload-time` of its files in PyPI's simple index, e.g.
`curl -sH 'Accept: application/vnd.pypi.simple.v1+json' https://pypi.org/simple/litellm/`.

What is kept, and why (Bee prices the tokens coding agents report, nothing else):
- entries whose `mode` is `chat` or `responses` (OpenAI's Codex models are
  `responses`) that give per-token `input_cost_per_token` and
  `output_cost_per_token`, or a `tiered_pricing` table (DashScope's Qwen
  models are priced only so). Entries without a `mode` are LiteLLM's aliases
  (kept below) and Fireworks' size-class buckets, which are no model id; the
  other modes (embedding, image, audio, completion, ...) are not chat tokens.
- of each entry only what Bee prices with: the four per-token rates, the
  reasoning rate, their `_above_<N>k_tokens` long-context rates (not the
  batch, flex, priority or cache-TTL variants), the `tiered_pricing` table,
  and `litellm_provider` (it decides which entry a bare id may be priced
  from, and xAI's thresholds are inclusive);
- entries with no `mode` and an `alias_of` naming a kept entry
  (`claude-sonnet-latest` -> `claude-sonnet-5-5`), as `{"alias_of": ...}`;
- contrib/prices/retained.json: models an older table listed that this
  snapshot dropped, only where the snapshot has no entry of that name.

The first key, `bee_source`, records the release, the wheel's digest and
the counts; Bee reads its source and date from it. One model a line,
sorted, so a diff between two releases reads model by model.
"""

import argparse
import hashlib
import json
import math
import re
import sys
import zipfile
from pathlib import Path

MEMBER = "litellm/model_prices_and_context_window_backup.json"
KINDS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_creation_input_token_cost",
    "cache_read_input_token_cost",
)
BASE_FIELDS = KINDS + ("output_cost_per_reasoning_token",)
ABOVE = re.compile(r"^(%s)_above_(\d+)(k?)_tokens$" % "|".join(KINDS))
MODES = ("chat", "responses")
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent.parent / "daemon" / "src" / "ledger" / "views" / "prices.json"


def rate(value):
    """A usable per-token price: a finite, non-negative number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def tiers_of(entry):
    """The `tiered_pricing` table with only its rates and ranges, or None
    when it is absent or not one Bee can apply (ranges contiguous from 0)."""
    table = entry.get("tiered_pricing")
    if not isinstance(table, list) or not table:
        return None
    kept = []
    for tier in table:
        bounds = tier.get("range") if isinstance(tier, dict) else None
        if not (isinstance(bounds, list) and len(bounds) == 2 and all(rate(b) is not None for b in bounds)):
            return None
        if rate(tier.get("input_cost_per_token")) is None:
            return None
        row = {"range": [int(b) if float(b).is_integer() else b for b in bounds]}
        row.update({f: tier[f] for f in BASE_FIELDS if rate(tier.get(f)) is not None})
        kept.append(row)
    kept.sort(key=lambda row: row["range"][0])
    if kept[0]["range"][0] != 0 or any(a["range"][1] != b["range"][0] for a, b in zip(kept, kept[1:])):
        return None
    return kept


def slim(entry):
    """What Bee keeps of a priced entry, or None when it is not one."""
    if entry.get("mode") not in MODES:
        return None
    tiers = tiers_of(entry)
    flat = rate(entry.get("input_cost_per_token")) is not None and rate(entry.get("output_cost_per_token")) is not None
    if not flat and tiers is None:
        return None
    kept = {}
    if isinstance(entry.get("litellm_provider"), str):
        kept["litellm_provider"] = entry["litellm_provider"]
    for field, value in entry.items():
        if (field in BASE_FIELDS or ABOVE.match(field)) and rate(value) is not None:
            kept[field] = value
    if tiers is not None:
        kept["tiered_pricing"] = tiers
    return dict(sorted(kept.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="a litellm wheel (pip download litellm==X --no-deps)")
    parser.add_argument("--released", required=True, help="the day the version was published (YYYY-MM-DD)")
    parser.add_argument("--retained", type=Path, default=HERE / "retained.json")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", args.released):
        sys.exit("--released: YYYY-MM-DD")
    version = re.match(r"litellm-([^-]+)-", args.wheel.name)
    if not version:
        sys.exit(f"{args.wheel}: not a litellm wheel name")
    wheel_bytes = args.wheel.read_bytes()
    with zipfile.ZipFile(args.wheel) as wheel:
        raw = wheel.read(MEMBER)
    snapshot = json.loads(raw)

    models = {}
    for name, entry in snapshot.items():
        if isinstance(entry, dict) and name != "sample_spec":
            kept = slim(entry)
            if kept is not None:
                models[name] = kept
    aliases = {
        name: {"alias_of": entry["alias_of"]}
        for name, entry in snapshot.items()
        if isinstance(entry, dict) and "mode" not in entry and entry.get("alias_of") in models
    }
    retained_file = json.loads(args.retained.read_text()) if args.retained.exists() else {}
    retained_about = retained_file.pop("bee_retained", {})
    retained = {}
    for name, entry in retained_file.items():
        if name not in snapshot:
            kept = slim({"mode": "chat", **entry})
            if kept is None:
                sys.exit(f"{args.retained}: {name} is not a priced entry")
            retained[name] = kept
    thresholds = sorted(
        {
            int(m.group(2)) * (1000 if m.group(3) else 1)
            for entry in models.values()
            for field in entry
            if (m := ABOVE.match(field))
        }
        | {tier["range"][0] for entry in models.values() for tier in entry.get("tiered_pricing", [])[1:]}
    )
    source = {
        "package": "litellm",
        "version": version.group(1),
        "released": args.released,
        "file": MEMBER,
        "wheel": args.wheel.name,
        "wheel_sha256": hashlib.sha256(wheel_bytes).hexdigest(),
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "entries": len(snapshot),
        "models": len(models),
        "aliases": len(aliases),
        "thresholds": thresholds,
        "retained": {**retained_about, "models": sorted(retained)},
        "generated_by": "contrib/prices/update.py",
    }
    table = {**models, **aliases, **retained}
    lines = [json.dumps("bee_source") + ": " + json.dumps(source)]
    lines += [json.dumps(name) + ": " + json.dumps(table[name]) for name in sorted(table)]
    args.out.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(
        f"{args.out}: litellm {source['version']} ({args.released}), {len(snapshot)} entries:"
        f" {len(models)} models, {len(aliases)} aliases, {len(retained)} retained;"
        f" thresholds {thresholds}; {args.out.stat().st_size} bytes"
    )


if __name__ == "__main__":
    main()
