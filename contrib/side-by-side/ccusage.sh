#!/usr/bin/env bash
# Bee and ccusage side by side on one home: compare.sh without tokscale
# (every agent's totals from both, then the totals per day where they
# differ).
#
#   contrib/side-by-side/ccusage.sh [HOME]      (default: $HOME)
exec env TOOLS=ccusage "$(dirname "$0")/compare.sh" "$@"
