"""Cuts a gpudoctor recording (.gdrec, plain or gzip; src/model/recording.h) down to the first MS
milliseconds of each attach window, for small test data made from a real recording: timeline
records (kernels, copies, API calls, syncs, ranges, overhead) that start later in a window are
dropped (but the GPU work of a kept call is kept), each window record is shortened to match, and the end record's counts are recomputed;
strings, info and device records are kept. Writes gzip.
  python3 gdrec_trim.py IN OUT.gdrec.gz MS
"""
import gzip
import struct
import sys

REC = struct.Struct("<HHI")
HEADER_BYTES = struct.Struct("<8sII")
TIMELINE = {4, 5, 6, 7, 8, 9}  # kernel, copy, api, sync, range, overhead: each starts with u64 start_ns
LAUNCH_PREFIXES = ("cudaLaunch", "cuLaunch")


def main():
    src, dst, ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
    raw = open(src, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    _, _, hbytes = HEADER_BYTES.unpack_from(raw, 0)
    recs, off = [], hbytes
    while off < len(raw):
        typ, flags, size = REC.unpack_from(raw, off)
        recs.append((typ, flags, raw[off + REC.size:off + REC.size + size]))
        off += REC.size + size
    windows = sorted(struct.unpack_from("<QQ", p) for t, _, p in recs if t == 10)
    keep_until = [(a, min(b, a + int(ms * 1e6))) for a, b in windows]
    strings = {struct.unpack_from("<I", p)[0]: p[4:].decode("utf-8", "replace") for t, _, p in recs if t == 1}

    def kept(start):
        return any(a <= start < b for a, b in keep_until)

    # The GPU work (kernels, copies) of a kept API call is kept wherever it runs, so that every
    # kept launch keeps its kernels; work started in the kept span is kept too.
    CORR_AT = {4: 16, 5: 24}
    # (Only ids one call has: a recording where CUPTI gave many calls one id keeps those as they are.)
    api_corr = [(struct.unpack_from("<I", p, 16)[0], struct.unpack_from("<Q", p)[0]) for t, _, p in recs if t == 6]
    seen = {}
    for c, _ in api_corr:
        seen[c] = seen.get(c, 0) + 1
    kept_corr = {c for c, start in api_corr if seen[c] == 1 and kept(start)}

    def keep(typ, p):
        if typ not in TIMELINE:
            return True
        start = struct.unpack_from("<Q", p)[0]
        if start == 0 or kept(start):  # 0: GPU work CUPTI gave no times (in flight at a detach), kept as it is
            return True
        return typ in CORR_AT and struct.unpack_from("<I", p, CORR_AT[typ])[0] in kept_corr

    out = [raw[:hbytes]]
    count = kernels = launches = 0
    for typ, flags, p in recs:
        if not keep(typ, p):
            continue
        if typ == 10:
            a, b = struct.unpack_from("<QQ", p)
            p = struct.pack("<QQ", a, min(b, a + int(ms * 1e6))) + p[16:]
        if typ == 11:
            # End: records, dropped, buffers, buffer_bytes, launch_calls, kernels, ... (recording.h)
            fields = list(struct.unpack_from("<6Q", p))
            fields[0], fields[4], fields[5] = count, launches, kernels
            p = struct.pack("<6Q", *fields) + p[48:]
        if typ == 4:
            kernels += 1
        if typ == 6:
            name = strings.get(struct.unpack_from("<QQIIII", p)[5], "")
            launches += (name.startswith(LAUNCH_PREFIXES) and "HostFunc" not in name) or name in ("cudaGraphLaunch", "cuGraphLaunch")
        out.append(REC.pack(typ, flags, len(p)) + p)
        count += 1
    with gzip.open(dst, "wb", compresslevel=9) as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
