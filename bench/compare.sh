#!/bin/sh
# Compare finrepro's cache with a sqlitedict store (the cache of HELM and
# lm-evaluation-harness) and with SQLite holding zstd BLOBs compressed with a
# trained dictionary, on the same synthetic exchanges: load time (finrepro's
# on one core, GOMAXPROCS=1, as the peers are, and on every core), dump
# time and store size; the store's size against the JSONL compressed with
# zstd -3 and zstd -19 --long; 1,000 random requests answered by key
# (finrepro replay against the SQLite peer's lookups); finrepro's
# offline replay of every request of the corpus (which must answer all of
# them); and the dump against its libzstd floor (bench/zstd_floor.py: the
# store's frames decoded by libzstd with the store's dictionary, one
# thread, and format 2's deltas applied). The 1,000 requests are also
# answered by the SQLite peer as a new process (Python's start, opening
# the database and loading the dictionary included, as a finrepro replay
# has them), and the replay's and that process's CPU time (user + system,
# which a busy machine disturbs less than wall time) are printed with the
# wall times. Not run by CI; needs /usr/bin/python3 with python3-sqlitedict and
# python3-zstandard, and the zstd command (apt-get install python3-sqlitedict
# python3-zstandard zstd).
#
#   sh bench/compare.sh [N] [ROUNDS]     # default 20000 exchanges, 3 rounds
#   CORPUS=judge sh bench/compare.sh     # repetitive judge traffic instead
#   FINREPRO=path/to/finrepro sh bench/compare.sh   # use a built binary
#   SIZES=0 sh bench/compare.sh          # without the JSONL's zstd sizes
#
# The JSONL's zstd -19 --long size takes minutes of CPU of its own and
# times nothing: SIZES=0 leaves the size peers out (their lines then say
# so), for rounds that compare times only.
#
# Prints one line per round and tool; ratios are computed per round, so
# that both tools see the same machine load.
set -eu
N=${1:-20000}
ROUNDS=${2:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
if [ -n "${FINREPRO:-}" ]; then cp "$FINREPRO" "$W/finrepro"; else go build -o "$W/finrepro" ./cmd/finrepro; fi
CORPUS=${CORPUS:-random}
go run ./cache/internal/synth/gensynth -corpus "$CORPUS" -n "$N" -seed 1 > "$W/ex.jsonl"
echo "corpus: $CORPUS, exchanges: $N, JSONL bytes: $(wc -c < "$W/ex.jsonl")"
# Size peers: the same JSONL as one zstd stream, fast and strongest (not
# random access, but what a reviewer downloads).
Z3=0 Z19=0
if [ "${SIZES:-1}" != 0 ]; then
	Z3=$(zstd -3 -T0 -q -c "$W/ex.jsonl" | wc -c)
	Z19=$(zstd -19 --long=27 -T0 -q -c "$W/ex.jsonl" | wc -c)
	echo "JSONL with zstd -3: $Z3 bytes; with zstd -19 --long=27: $Z19 bytes"
fi
/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    print(json.dumps(json.loads(line)["request"], ensure_ascii=False, separators=(",", ":")))
' "$W/ex.jsonl" > "$W/req.jsonl"
/usr/bin/python3 -c '
import random, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
random.seed(1)
print("\n".join(random.sample(lines, min(1000, len(lines)))))
' "$W/req.jsonl" > "$W/req1000.jsonl"
now() { date +%s.%N; }
for r in $(seq "$ROUNDS"); do
	B=$(/usr/bin/python3 bench/sqlitedict_baseline.py "$W/ex.jsonl" "$W/base.sqlite")
	P=$(/usr/bin/python3 bench/sqlite_zstd_peer.py "$W/ex.jsonl" "$W/req1000.jsonl" "$W/peer.sqlite")
	p0=$(now)
	/usr/bin/time -f "%U %S" -o "$W/peer.cpu" /usr/bin/python3 bench/sqlite_zstd_peer.py --lookup "$W/req1000.jsonl" "$W/peer.sqlite" > /dev/null
	p1=$(now)
	PEER_PROC=$(awk -v a="$p0" -v b="$p1" '{print b - a, $1 + $2}' "$W/peer.cpu")
	rm -f "$W/base.sqlite" "$W/peer.sqlite" "$W/peer.sqlite.dict"
	rm -rf "$W/c"
	# The load on one core first (the peer is single-threaded), then on
	# every core; both must write the same store.
	rm -rf "$W/c1"
	u0=$(now); GOMAXPROCS=1 "$W/finrepro" cache load --dir "$W/c1" "$W/ex.jsonl" > /dev/null; u1=$(now)
	t0=$(now); "$W/finrepro" cache load --dir "$W/c" "$W/ex.jsonl" > /dev/null; t1=$(now)
	if [ "$(cd "$W/c1" && find packs dicts -type f | sort)" != "$(cd "$W/c" && find packs dicts -type f | sort)" ]; then
		echo "cache load on one core and on $(nproc) wrote different stores" >&2
		exit 1
	fi
	rm -rf "$W/c1"
	echo "$u0 $u1" > "$W/load1"
	/usr/bin/time -f "%U %S" -o "$W/dump.cpu" "$W/finrepro" cache dump --dir "$W/c" > /dev/null; t2=$(now)
	"$W/finrepro" replay --requests "$W/req.jsonl" --dir "$W/c" > /dev/null 2>"$W/replay.err" || { cat "$W/replay.err"; exit 1; }
	t3=$(now)
	/usr/bin/time -f "%U %S" -o "$W/replay.cpu" "$W/finrepro" replay --requests "$W/req1000.jsonl" --dir "$W/c" > /dev/null 2>"$W/replay.err" || { cat "$W/replay.err"; exit 1; }
	t4=$(now)
	REPLAY_CPU=$(awk '{print $1 + $2}' "$W/replay.cpu")
	F_BYTES=$(du -sb "$W/c" | cut -f1)
	FLOOR=$(/usr/bin/python3 bench/zstd_floor.py "$W/c")
	DUMP_CPU=$(awk '{print $1 + $2}' "$W/dump.cpu")
	/usr/bin/python3 - "$B" "$t0" "$t1" "$t2" "$F_BYTES" "$t3" "$Z3" "$Z19" "$P" "$t4" "$FLOOR" "$DUMP_CPU" "$REPLAY_CPU" $PEER_PROC "$W/load1" <<'PY'
import json, sys
b = json.loads(sys.argv[1])
floor = json.loads(sys.argv[11])
fl_s, fl_cpu, dump_cpu = floor["decode_s"], floor["cpu_s"], float(sys.argv[12])
p, t4 = json.loads(sys.argv[9]), float(sys.argv[10])
t0, t1, t2, fb, t3 = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
z3, z19 = int(sys.argv[7]), int(sys.argv[8])
if z3 and z19:
    print(f"finrepro store: {fb / z3:.2f}x the JSONL with zstd -3, {fb / z19:.2f}x with zstd -19 --long")
else:
    print("finrepro store: JSONL sizes left out (SIZES=0)")
fl, fd = t1 - t0, t2 - t1
print(f"finrepro replay of every request: {t3 - t2:.2f}s ({(t3 - t2) / fd:.2f}x the dump)")
print(f"sqlitedict: load {b['load_s']:.2f}s dump {b['dump_s']:.2f}s size {b['bytes']}")
print(f"finrepro:   load {fl:.2f}s dump {fd:.2f}s size {fb}")
print(f"sqlite+zstd+dict: load {p['load_s']:.2f}s dump {p['dump_s']:.2f}s 1000 lookups {p['lookup_s']:.2f}s size {p['bytes']}")
replay_cpu, peer_wall, peer_cpu = float(sys.argv[13]), float(sys.argv[14]), float(sys.argv[15])
print(f"finrepro 1000-request replay: {t4 - t3:.2f}s, {replay_cpu:.2f} CPU-s")
print(f"sqlite+zstd+dict 1000 lookups as a new process: {peer_wall:.2f}s, {peer_cpu:.2f} CPU-s; finrepro replay {peer_wall / (t4 - t3):.2f}x faster in wall time, {peer_cpu / replay_cpu:.2f}x in CPU")
print(f"libzstd floor (one thread): {fl_s:.2f}s, {fl_cpu:.2f} CPU-s; finrepro dump {fd / fl_s:.2f}x the floor in wall time (with opening the store and reading its files, which the floor does before its clock starts), {dump_cpu:.2f} CPU-s: {dump_cpu / fl_cpu:.2f}x the floor's CPU")
u0, u1 = map(float, open(sys.argv[16]).read().split())
print(f"finrepro load on one core (GOMAXPROCS=1): {u1 - u0:.2f}s: {p['load_s']/(u1 - u0):.2f}x faster than sqlite+zstd+dict")
print(f"against sqlite+zstd+dict: load {p['load_s']/fl:.2f}x faster, dump {p['dump_s']/fd:.2f}x faster, 1000 requests {p['lookup_s']/(t4 - t3):.2f}x faster, store {p['bytes']/fb:.2f}x smaller")
print(f"ratios: load {b['load_s']/fl:.2f}x faster, dump {b['dump_s']/fd:.2f}x faster, store {b['bytes']/fb:.2f}x smaller (raw JSONL/finrepro {b['raw_bytes']/fb:.2f}x)")
PY
done
