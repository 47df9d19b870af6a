#!/usr/bin/env bash
# Ranking benchmark: `vari rank` against variantlib 0.2.2 on synthetic releases of 1,000 and
# 10,000 variants x 20 properties, whole process each, same profile; checks both orders are
# equal first. Times are medians of interleaved runs in CPU time (user + sys; see compare.py),
# once with each run primed by a run of the same command, once plainly interleaved.
#
# With VARI_BASE (an older vari binary, e.g. a release build of the commit before a refactor),
# `vari rank` of $VARI_BASE against `vari rank` of $VARI or this tree's release build instead
# of variantlib: same orders first, then the same two timings, ratios after / before.
#
#   bench/rank.sh            (needs cargo, python3 >= 3.10 and PyPI access on the first run)
#   RUNS=10 bench/rank.sh    (fewer runs)
#   VARI_BASE=/tmp/before/target/release/vari VARI=target/release/vari bench/rank.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

build_vari
[ -n "$base" ] || ensure_venv 'variantlib==0.2.2'

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

for variants in 1000 10000; do
  dir="$data/$variants"
  python3 "$here/gen_variants.py" "$dir" --variants "$variants"
  file="$dir/synthetic-1.0-variants.json"
  profile="$dir/profile.json"

  # Same answer first: a benchmark of two programs that disagree means nothing.
  order='import json,sys; print(json.dumps(json.load(sys.stdin)["order"]))'
  "$vari" rank "$file" --profile "$profile" --json | python3 -c "$order" >"$dir/vari.order"
  if [ -n "$base" ]; then
    other=vari-base
    "$base" rank "$file" --profile "$profile" --json | python3 -c "$order" >"$dir/$other.order"
  else
    other=variantlib
    "$venv/bin/python" "$here/rank_variantlib.py" "$file" "$profile" >"$dir/variantlib.raw"
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$dir/variantlib.raw" \
      >"$dir/variantlib.order"
  fi
  if ! cmp -s "$dir/vari.order" "$dir/$other.order"; then
    echo "bench/rank.sh: the orders differ ($variants variants)" >&2
    diff <(tr ',' '\n' <"$dir/vari.order") <(tr ',' '\n' <"$dir/$other.order") | head -20 >&2
    exit 1
  fi
  compatible=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$dir/vari.order")
  echo
  echo "$variants variants x 20 properties: orders agree, $compatible of $((variants + 1)) compatible"
  runs=${RUNS:-$((variants >= 10000 ? 7 : 20))}
  # Twice: each program timed right after a run of itself (no program timed right after the
  # other; see compare.py), then plainly interleaved, where vari always follows variantlib.
  for primed in --primed ""; do
    if [ -n "$base" ]; then
      python3 "$here/compare.py" --runs "$runs" --warmup 2 $primed \
        "vari rank (before)=$base rank $file --profile $profile --json" \
        "vari rank (after)=$vari rank $file --profile $profile --json"
    else
      python3 "$here/compare.py" --runs "$runs" --warmup 2 $primed \
        "vari rank=$vari rank $file --profile $profile --json" \
        "variantlib 0.2.2=$venv/bin/python $here/rank_variantlib.py $file $profile"
    fi
  done
done
