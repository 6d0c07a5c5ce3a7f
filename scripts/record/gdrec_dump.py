"""An independent reader of gpudoctor recordings (.gdrec, plain or gzip; src/model/recording.h), in
plain Python, to check the C++ reader's counts: kernels, launch calls, launches without GPU work,
graph kernels, per-thread launch counts, NCCL calls (from NCCL's NVTX payloads) by kind, bytes and
communicator. No dependencies.
  python3 gdrec_dump.py FILE [--json] [--seq]   (--seq prints the launch sequence: time, thread, kernel)
"""
import gzip
import json
import struct
import sys

HEADER = struct.Struct("<8sIIqiiiIQq")
REC = struct.Struct("<HHI")
KERNEL = struct.Struct("<QQIIII3i3iIIIIQ")
COPY = struct.Struct("<QQQIIIIBBBBI")
API = struct.Struct("<QQIIIIB7x")
NCCL = struct.Struct("<QIIQQii")
NCCL_NAMES = {4: "allgather", 5: "allreduce", 6: "broadcast", 7: "reduce_scatter", 8: "reduce", 9: "send", 10: "recv",
              16: "all_to_all", 17: "gather", 18: "scatter", 0: "comm_init", 2: "comm_destroy", 3: "comm_abort"}


def read(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    magic, version, hbytes, pid, rank, local, world, cupti, t0, real0 = HEADER.unpack_from(raw, 0)
    assert magic == b"GDREC\x00\r\n", "not a recording"
    off = hbytes
    out = {"rank": rank, "pid": pid, "strings": {}, "kernels": [], "copies": [], "api": [], "end": False}
    while off < len(raw):
        typ, _, size = REC.unpack_from(raw, off)
        off += REC.size
        p = raw[off:off + size]
        off += size
        if typ == 1:
            out["strings"][struct.unpack_from("<I", p)[0]] = p[4:].decode("utf-8", "replace")
        elif typ == 4:
            k = KERNEL.unpack_from(p)
            out["kernels"].append({"start": k[0], "end": k[1], "corr": k[2], "stream": k[4], "name": k[5], "graph": k[15]})
        elif typ == 5:
            c = COPY.unpack_from(p)
            out["copies"].append({"start": c[0], "corr": c[3]})
        elif typ == 6:
            a = API.unpack_from(p)
            out["api"].append({"start": a[0], "end": a[1], "corr": a[2], "tid": a[3], "name": a[5], "domain": a[6]})
        elif typ == 12:
            t, tid, schema, comm, nbytes, arg, arg2 = NCCL.unpack_from(p)
            out.setdefault("nccl", []).append({"start": t, "tid": tid, "call": NCCL_NAMES.get(schema, str(schema)),
                                               "comm": f"{comm:016x}", "bytes": nbytes, "arg": arg})
        elif typ == 10:
            out["windows"] = out.get("windows", 0) + 1
        elif typ == 11:
            out["end"] = True
    return out


def main():
    r = read(sys.argv[1])
    s = r["strings"]
    gpu_corr = {}
    for k in r["kernels"]:
        if k["corr"] not in gpu_corr or k["start"] < gpu_corr[k["corr"]][0]:
            gpu_corr[k["corr"]] = (k["start"], s.get(k["name"], "?"))
    for c in r["copies"]:
        gpu_corr.setdefault(c["corr"], (c["start"], "copy"))
    launch = [a for a in r["api"] if s.get(a["name"], "").startswith(("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch"))
              and "HostFunc" not in s.get(a["name"], "")]
    per_tid = {}
    for a in launch:
        per_tid[a["tid"]] = per_tid.get(a["tid"], 0) + 1
    summary = {"rank": r["rank"], "complete": r["end"], "windows": r.get("windows", 0), "kernels": len(r["kernels"]),
               "graph_kernels": sum(1 for k in r["kernels"] if k["graph"]), "launch_calls": len(launch),
               "launches_without_gpu_work": sum(1 for a in launch if a["corr"] not in gpu_corr),
               "launches_per_thread": per_tid, "nccl_calls": {}}
    for c in r.get("nccl", []):
        key = f'{c["call"]} {c["bytes"]} B comm {c["comm"]}'
        summary["nccl_calls"][key] = summary["nccl_calls"].get(key, 0) + 1
    if "--seq" in sys.argv:
        for a in sorted(launch, key=lambda a: a["start"]):
            print(a["start"], a["tid"], gpu_corr.get(a["corr"], (0, "-"))[1][:60])
    else:
        print(json.dumps(summary) if "--json" in sys.argv else "\n".join(f"{k}: {v}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
