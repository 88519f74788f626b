#!/usr/bin/python3
"""The libzstd floor of `finrepro cache dump`: decode every zstd frame of a store's packs.

What a dump cannot avoid is decompressing the store's content. This reads
every pack of a finrepro store, finds its frames from the pack's index
(format 2: the blocks; format 1: one frame per object), leaves the
dictionary ID out of each frame's header (see without_dict_id) and decodes
each with libzstd (python-zstandard) and the store's dictionary, one thread,
writing nothing. It prints one JSON line: seconds spent decoding, wall
and CPU (files read and indexes parsed before the clock starts), frames
and decoded bytes. For format 2 it also applies each delta to its base (in Python,
which makes this floor slower than libzstd alone), since a dump must
produce those bytes. No hashing, no JSON, no output: a floor, not a peer.

    /usr/bin/python3 bench/zstd_floor.py STORE_DIR

Needs python3-zstandard (apt-get install python3-zstandard). Not run by CI.
"""
import glob
import json
import os
import struct
import sys
import time

import zstandard


def uvarint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def without_dict_id(fr):
    """The frame with the dictionary ID left out of its header: libzstd
    refuses a raw-content dictionary (ID 0) for a frame naming an ID, and
    finrepro's frames name one derived from the dictionary's digest."""
    fhd = fr[4]
    did = (0, 1, 2, 4)[fhd & 3]
    if did == 0:
        return fr
    at = 5 + (0 if fhd & 0x20 else 1)  # the window descriptor, unless single segment
    return fr[:4] + bytes([fhd & ~3]) + fr[5:at] + fr[at + did :]


def frames_of(pack):
    """Returns the dictionary digest (hex), the frames of a pack and, for
    format 2, each object's entry length and base (-1: literal)."""
    off = struct.unpack("<Q", pack[-16:-8])[0]
    index = zstandard.ZstdDecompressor().decompress(pack[off:-16], max_output_size=256 << 20)
    magic = pack[:8]
    if magic == b"FRPACK2\n":
        i = len(b"finrepro-pack-index/2\n")
        dict_digest = index[i : i + 32].hex()
        i += 32
        n, i = uvarint(index, i)
        frames, at = [], 8
        for _ in range(n):
            clen, i = uvarint(index, i)
            _, i = uvarint(index, i)
            frames.append(without_dict_id(pack[at : at + clen]))
            at += clen
        i += 32 * n  # each block's SHA-256 (not checked: finrepro trusts the packs it wrote)
        # the objects: entry lengths and flags, digests, then the deltas' bases
        n, i = uvarint(index, i)
        ents = []
        for _ in range(n):
            v, i = uvarint(index, i)
            ents.append(v)
        i += 32 * sum(1 for v in ents if v & 2)
        objs = []
        for p, v in enumerate(ents):
            if v & 1:
                back, i = uvarint(index, i)
                _, i = uvarint(index, i)
                objs.append((v >> 2, p - back))
            else:
                objs.append((v >> 2, -1))
        return dict_digest, frames, objs
    if magic == b"FRPACK1\n":
        i = len(b"finrepro-pack-index/1\n")
        dict_digest = index[i : i + 32].hex()
        i += 32
        n, i = uvarint(index, i)
        frames = []
        for _ in range(n):
            i += 32
            o, i = uvarint(index, i)
            clen, i = uvarint(index, i)
            _, i = uvarint(index, i)
            frames.append(without_dict_id(pack[o : o + clen]))
        return dict_digest, frames, None
    raise SystemExit("not a pack: %r" % magic)


def main():
    store = sys.argv[1]
    work = []  # (dictionary, frames, objects) per pack
    for p in sorted(glob.glob(os.path.join(store, "packs", "*", "*.pack"))):
        with open(p, "rb") as f:
            work.append(frames_of(f.read()))
    dctxs = {}
    for d, _, _ in work:
        if d not in dctxs:
            if d == "00" * 32:
                dctxs[d] = zstandard.ZstdDecompressor()
            else:
                with open(os.path.join(store, "dicts", d + ".dict"), "rb") as f:
                    zd = zstandard.ZstdCompressionDict(f.read(), dict_type=zstandard.DICT_TYPE_RAWCONTENT)
                dctxs[d] = zstandard.ZstdDecompressor(dict_data=zd)
    t0, c0 = time.perf_counter(), time.process_time()
    n = raw = 0
    for d, frames, objs in work:
        dctx = dctxs[d]
        blocks = [dctx.decompress(fr) for fr in frames]
        n += len(frames)
        if objs is None:
            raw += sum(len(b) for b in blocks)
            continue
        data = b"".join(blocks)
        at, lits = 0, []
        for length, base in objs:
            e = data[at : at + length]
            at += length
            lits.append(e)
            raw += len(e) if base < 0 else len(apply_delta(lits[base], e))
    print(json.dumps({"decode_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "frames": n, "bytes": raw}))


def apply_delta(base, delta):
    out, i = [], 0
    while True:
        n, i = uvarint(delta, i)
        out.append(delta[i : i + n])
        i += n
        if i == len(delta):
            return b"".join(out)
        c, i = uvarint(delta, i)
        o, i = uvarint(delta, i)
        out.append(base[o : o + c])

if __name__ == "__main__":
    main()
