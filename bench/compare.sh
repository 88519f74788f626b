#!/bin/sh
# Compare finrepro's cache with a sqlitedict store (the cache of HELM and
# lm-evaluation-harness) on the same synthetic exchanges: load time, dump
# time and store size. Not run by CI; needs /usr/bin/python3 with
# python3-sqlitedict (apt-get install python3-sqlitedict).
#
#   sh bench/compare.sh [N] [ROUNDS]     # default 20000 exchanges, 3 rounds
#   FINREPRO=path/to/finrepro sh bench/compare.sh   # use a built binary
#
# Prints one line per round and tool; ratios are computed per round, so
# that both tools see the same machine load.
set -eu
N=${1:-20000}
ROUNDS=${2:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
if [ -n "${FINREPRO:-}" ]; then cp "$FINREPRO" "$W/finrepro"; else go build -o "$W/finrepro" ./cmd/finrepro; fi
go run ./cache/internal/synth/gensynth -n "$N" -seed 1 > "$W/ex.jsonl"
echo "exchanges: $N, JSONL bytes: $(wc -c < "$W/ex.jsonl")"
now() { date +%s.%N; }
for r in $(seq "$ROUNDS"); do
	B=$(/usr/bin/python3 bench/sqlitedict_baseline.py "$W/ex.jsonl" "$W/base.sqlite")
	rm -rf "$W/c"
	t0=$(now); "$W/finrepro" cache load --dir "$W/c" "$W/ex.jsonl" > /dev/null; t1=$(now)
	"$W/finrepro" cache dump --dir "$W/c" > /dev/null; t2=$(now)
	F_BYTES=$(du -sb "$W/c" | cut -f1)
	/usr/bin/python3 - "$B" "$t0" "$t1" "$t2" "$F_BYTES" <<'PY'
import json, sys
b = json.loads(sys.argv[1])
t0, t1, t2, fb = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
fl, fd = t1 - t0, t2 - t1
print(f"sqlitedict: load {b['load_s']:.2f}s dump {b['dump_s']:.2f}s size {b['bytes']}")
print(f"finrepro:   load {fl:.2f}s dump {fd:.2f}s size {fb}")
print(f"ratios: load {b['load_s']/fl:.2f}x faster, dump {b['dump_s']/fd:.2f}x faster, store {b['bytes']/fb:.2f}x smaller (raw JSONL/finrepro {b['raw_bytes']/fb:.2f}x)")
PY
done
