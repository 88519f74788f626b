#!/bin/sh
# Time "finrepro reproduce" on the full-scale demo bundle against reading
# the whole store once ("finrepro cache dump" to /dev/null), in the same
# run, and report the ratio and peak memory (reruns into one output
# folder, after a first run that creates it). Not run by CI.
#
#   sh bench/reproduce.sh [ROUNDS]      # default 3 rounds
#   BUNDLE=dir sh bench/reproduce.sh    # reuse a built full-scale bundle
#   OUT=dir sh bench/reproduce.sh       # write the outputs there (a new
#                                       # folder, e.g. on another file system)
#   BASE=/path/to/finrepro-old sh bench/reproduce.sh
#                                       # also time that binary's reproduce
#                                       # of the same bundle, in each round
#                                       # right after this one's (paired,
#                                       # alternating), into its own folder
#
# Wall time on a shared machine varies with its load; user time (CPU-s)
# varies less. Each round prints both, for BASE too, and their ratios.
set -eu
ROUNDS=${1:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/finrepro" ./cmd/finrepro
B=${BUNDLE:-}
if [ -z "$B" ]; then
	B="$W/full"
	/usr/bin/time -f "demo --scale full: %e s, peak %M KB" "$W/finrepro" demo --out "$B" --scale full > /dev/null 2> "$W/demo.err" || { cat "$W/demo.err"; exit 1; }
	tail -n 1 "$W/demo.err"
fi
echo "bundle: $(du -sh "$B" | cut -f1), exchanges: $("$W/finrepro" cache stats --dir "$B/cache" --json | sed -n 's/.*"exchanges": *\([0-9]*\).*/\1/p' | head -n 1)"
measure() { # label, command...: prints "seconds peak_kb user_seconds"
	label=$1; shift
	/usr/bin/time -f "%e %M %U" -o "$W/t" "$@" > /dev/null 2> /dev/null
	cat "$W/t"
}
BASE=${BASE:-}
# The first run into a new folder also creates every output file; the
# rounds below rerun into that folder, as a reviewer rerunning does.
O=${OUT:-$W/out}
if [ -e "$O" ]; then echo "$O exists: OUT must name a new folder" >&2; exit 2; fi
f=$(measure fresh "$W/finrepro" reproduce "$B" --out "$O" --quiet)
echo "$f" | awk '{ printf "first run into a new folder: %.2f s, peak %d MB\n", $1, $2/1024 }'
if [ -n "$BASE" ]; then
	"$BASE" reproduce "$B" --out "$W/base-out" --quiet > /dev/null 2>&1 || { echo "BASE failed: $BASE reproduce $B" >&2; exit 1; }
	cmp -s "$O/SHA256SUMS" "$W/base-out/SHA256SUMS" && echo "SHA256SUMS: the same as BASE's" || echo "SHA256SUMS: differ from BASE's"
fi
for r in $(seq "$ROUNDS"); do
	d=$(measure dump "$W/finrepro" cache dump --dir "$B/cache")
	p=$(measure reproduce "$W/finrepro" reproduce "$B" --out "$O" --quiet)
	b=""
	if [ -n "$BASE" ]; then
		b=$(measure base "$BASE" reproduce "$B" --out "$W/base-out" --quiet)
	fi
	n=$(measure no-sweep "$W/finrepro" reproduce "$B" --out "$O" --quiet --no-sweep)
	echo "$d $p $n" | awk -v r="$r" '{ printf "round %d: dump %.2f s | reproduce %.2f s, %.2f user-s (%.1fx dump, peak %d MB) | without sweeps %.2f s (%.1fx, peak %d MB)\n", r, $1, $4, $6, $4/$1, $5/1024, $7, $7/$1, $8/1024 }'
	if [ -n "$b" ]; then
		echo "$p $b" | awk '{ printf "         BASE reproduce %.2f s, %.2f user-s (peak %d MB): this one takes %.2fx its time, %.2fx its user time\n", $4, $6, $5/1024, $1/$4, $3/$6 }'
	fi
done
