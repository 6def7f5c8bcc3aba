#!/usr/bin/env bash
# Build a wheel of this tree, install it (not editable) into a fresh venv, and check from outside the
# source tree what a new user does first: bundled datasets by name, an evaluation, the README's
# Python snippet. An editable install hides packaging bugs (missing packages, package data).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip wheel -q --no-deps -w "$work/dist" . >/dev/null
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$work"/dist/*.whl
cd "$work"
"$work/venv/bin/toolkit" info iris >/dev/null
"$work/venv/bin/toolkit" evaluate vote -c nb-weka --runs 2 >/dev/null
"$work/venv/bin/python" "$root/scripts/ci/readme_snippet.py" "$root/README.md" > snippet.py
"$work/venv/bin/python" snippet.py >/dev/null
# package data of the core: Java's zone names for DATE values (toolkit/data/java_zone_names.json)
printf '@relation z\n@attribute d date "yyyy-MM-dd HH:mm z"\n@data\n"2000-07-04 09:30 PDT"\n' > zoned.arff
"$work/venv/bin/python" -c "import toolkit; assert toolkit.load_arff('zoned.arff').X[0, 0] == 962728200000.0"
echo "wheel install: toolkit info iris, evaluate vote, README snippet, a zoned date: ok"
