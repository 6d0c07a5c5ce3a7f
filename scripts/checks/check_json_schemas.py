"""Every verb's JSON document against its schema (docs/schemas/<document>.schema.json, issue 20).

Runs each verb that works without a GPU on committed inputs (several inputs per document where
they give different shapes), and validates each document with python3-jsonschema (Draft 2020-12):
the tool and schema_version constants, the required fields and their types (times in integer
nanoseconds, sizes in integer bytes). The documents only a GPU machine writes (bench gpu, nccl
bench, nccl tune, record) are validated there by the GPU check scripts, with --only.

  python3 check_json_schemas.py GPUDOCTOR SOURCE_DIR FAKE_NVML_LIB [--only DOC,...] [--files DOC=FILE ...]
  python3 check_json_schemas.py GPUDOCTOR SOURCE_DIR FAKE_NVML_LIB --draft OUT_DIR
      (writes a schema inferred from the documents, as a start when a document's shape changes:
       every key present in all of them required, types as seen; review before committing)
Exit 0 when every document validates; 1 with one line per problem otherwise; 77 without jsonschema.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)


SCHEMA_OF = {"checklist": "analyze"}


def commands(src, tmp, fake_nvml, gd):
    ex = f"{src}/examples/ddp_bf16_flash"
    # The example's rank summaries: the streaming mode from summaries alone (no diagnosis).
    summary = os.path.join(tmp, "ex.gdsum")
    subprocess.run([gd, "analyze", "-q", "--summary-out", summary, ex], capture_output=True, check=True)
    wi = f"{src}/testdata/whatif"
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "proc"), exist_ok=True)
    for name, text in {"stat": "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\n",
                       "meminfo": "MemTotal: 1024 kB\nMemAvailable: 512 kB\n",
                       "loadavg": "0.50 0.40 0.30 1/100 1\n"}.items():
        open(os.path.join(root, "proc", name), "w").write(text)
    io_dir = os.path.join(tmp, "io")
    os.makedirs(io_dir, exist_ok=True)
    nvml = {"GPUDOCTOR_FAKE_NVML": f"{src}/testdata/fake_nvml/monitor_2gpu.txt"}
    topo = f"{src}/testdata/topology"
    return {
        "analyze": [["analyze", "-q", ex], ["analyze", "-q", f"{src}/testdata/kineto/launch_bound_rank0.pt.trace.json.gz"],
                    ["analyze", "-q", f"{wi}/foreach_false_optimizer__base.pt.trace.json.gz"],
                    ["analyze", "-q", "--no-what-if", f"{wi}/foreach_false_optimizer__base.pt.trace.json.gz"],
                    ["analyze", "-q", f"{src}/testdata/record/torch_small.gdrec.gz"],
                    ["analyze", "-q", ex, "--nccl-env", f"{src}/testdata/nccl_env/mixed.sh", "--nccl-log",
                     f"{src}/testdata/nccl_logs/ddp_2xh200_info.log"]],
        "analyze_fleet": [["analyze", "-q", "--stream", ex], ["analyze", "-q", "--stream", "--no-what-if", ex],
                          ["analyze", "-q", summary]],
        "checklist": [["checklist", "-q", ex]],
        "compare": [["compare", "-q", ex, ex],
                    ["compare", "-q", f"{wi}/foreach_false_optimizer__base.pt.trace.json.gz",
                     f"{wi}/foreach_false_optimizer__bf16.pt.trace.json.gz"]],
        "nccl_env": [["nccl", "env", "--nccl-version", "2.28.3", "--from", f"{src}/testdata/nccl_env/{f}"]
                     for f in ("mixed.sh", "pod.yaml", "slurm.sh")],
        "nccl_log": [["nccl", "log", f"{src}/testdata/nccl_logs/{f}"] for f in ("ddp_2xh200_info.log", "multinode_socket.log")],
        "plan": [["plan", "--model", "gpt2", "--gpus-per-node", "1", "--global-batch", "8"],
                 ["plan", "--model", "llama2-7b", "--gpus-per-node", "8", "--nodes", "2", "--global-batch", "512"]],
        "place_node": [["place", "--gpus", "4", "--topology", f"{topo}/dgx1_v100.toml"],
                       ["place", "--gpus", "2", "--topology", f"{topo}/pcie_8gpu_2socket.toml"]],
        "place_cluster": [["place", "--nodes", "2", "--gpus-per-node", "8", "--topology", f"{topo}/cluster_small.toml"]],
        "topo": [["topo", "--topology", f"{topo}/{f}.toml"] for f in ("dgx1_v100", "dgx_h100", "pcie_8gpu_2socket")],
        "monitor": [(["monitor", "--once", "--interval", "0.05", "--root", root, "--nvml-library", fake_nvml], nvml)],
        "monitor_report": [["monitor", "report", f"{src}/docs/monitor_h200/monitor.jsonl.gz"]],
        "bench_io": [["bench", "io", io_dir, "-q", "--files", "20", "--large-size", "4M", "--seconds", "0.01",
                      "--threads", "1", "--no-cold"]],
    }


def run(gd, argv, env_extra):
    env = dict(os.environ, **env_extra)
    p = subprocess.run([gd] + argv + ["--json", "-"], capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"gpudoctor {' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return json.loads(p.stdout)


def infer(docs):
    """A schema every one of `docs` satisfies: keys present in all objects required, types as seen."""
    def typ(v):
        return ("null" if v is None else "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int)
                else "number" if isinstance(v, float) else "string" if isinstance(v, str)
                else "array" if isinstance(v, list) else "object")

    def merge(values):
        types = sorted({typ(v) for v in values})
        if "integer" in types and "number" in types:
            types.remove("integer")
        s = {"type": types[0] if len(types) == 1 else types}
        objs = [v for v in values if isinstance(v, dict)]
        if objs:
            keys = sorted(set().union(*objs))
            s["properties"] = {k: merge([o[k] for o in objs if k in o]) for k in keys}
            req = [k for k in keys if all(k in o for o in objs)]
            if req:
                s["required"] = req
        arrs = [x for v in values if isinstance(v, list) for x in v]
        if arrs:
            s["items"] = merge(arrs)
        return s

    return merge(docs)


def main():
    gd, src, fake_nvml = sys.argv[1:4]
    args = sys.argv[4:]
    only = set(args[args.index("--only") + 1].split(",")) if "--only" in args else None
    files = {}
    if "--files" in args:
        for a in args[args.index("--files") + 1:]:
            if "=" not in a:
                break
            k, v = a.split("=", 1)
            files.setdefault(k, []).append(v)
    draft = args[args.index("--draft") + 1] if "--draft" in args else None
    problems = 0
    with tempfile.TemporaryDirectory() as tmp:
        table = {} if files else commands(src, tmp, fake_nvml, gd)
        for doc, paths in files.items():
            table[doc] = [("file", p) for p in paths]
        for doc, cmds in table.items():
            if only and doc not in only:
                continue
            docs = []
            for c in cmds:
                if isinstance(c, tuple) and c[0] == "file":
                    docs.append(json.load(open(c[1])))
                    continue
                argv, env = (c if isinstance(c, tuple) else (c, {}))
                try:
                    docs.append(run(gd, argv, env))
                except (RuntimeError, json.JSONDecodeError) as e:
                    print(f"{doc}: {e}")
                    problems += 1
            if draft:
                s = infer(docs)
                s = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": f"gpudoctor {doc}", **s}
                open(os.path.join(draft, f"{doc}.schema.json"), "w").write(json.dumps(s, indent=1) + "\n")
                continue
            # The checklist's document is the analyze document under the checklist's name.
            path = os.path.join(src, "docs", "schemas", f"{SCHEMA_OF.get(doc, doc)}.schema.json")
            try:
                schema = json.load(open(path))
            except (OSError, json.JSONDecodeError) as e:
                print(f"{doc}: no schema: {e}")
                problems += 1
                continue
            v = jsonschema.Draft202012Validator(schema)
            before = problems
            for i, d in enumerate(docs):
                errs = sorted(v.iter_errors(d), key=lambda e: list(e.absolute_path))
                for e in errs[:5]:
                    where = "/".join(str(x) for x in e.absolute_path) or "(top)"
                    print(f"{doc} #{i + 1}: {where}: {e.message[:200]}")
                problems += len(errs)
            print(f"{doc}: {len(docs)} document{'s' if len(docs) != 1 else ''} "
                  f"{'valid' if problems == before else 'INVALID'} against {os.path.relpath(path, src)}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
