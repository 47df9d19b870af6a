#!/usr/bin/env bash
# Ranking benchmark: `vari rank` against variantlib 0.2.2 on a synthetic release of 1,000
# variants x 20 properties, whole process each, same profile; checks both orders are equal.
#
#   bench/rank.sh            (needs cargo, python3 >= 3.10 and PyPI access on the first run)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ensure_venv 'variantlib==0.2.2'
build_vari

data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
python3 "$here/gen_variants.py" "$data"
file="$data/synthetic-1.0-variants.json"
profile="$data/profile.json"

# Same answer first: a benchmark of two programs that disagree means nothing.
"$vari" rank "$file" --profile "$profile" --json |
  python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["order"]))' >"$data/vari.order"
"$venv/bin/python" "$here/rank_variantlib.py" "$file" "$profile" >"$data/variantlib.raw"
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$data/variantlib.raw" \
  >"$data/variantlib.order"
if ! cmp -s "$data/vari.order" "$data/variantlib.order"; then
  echo "bench/rank.sh: the orders differ" >&2
  diff <(tr ',' '\n' <"$data/vari.order") <(tr ',' '\n' <"$data/variantlib.order") | head -20 >&2
  exit 1
fi
compatible=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$data/vari.order")
echo "orders agree: $compatible of 1001 variants are compatible, same order"

python3 "$here/compare.py" --runs 20 --warmup 3 \
  "vari rank=$vari rank $file --profile $profile --json" \
  "variantlib 0.2.2=$venv/bin/python $here/rank_variantlib.py $file $profile"
