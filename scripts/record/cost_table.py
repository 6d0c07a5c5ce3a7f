"""The recorder's cost per job from cost_by_job.sh's cost.jsonl: per pair, recorded / plain median step;
then per job the paired ratios' median, min and max, and the plain and recorded medians.

    python3 scripts/record/cost_table.py cost.jsonl[.gz] [more.jsonl ...] [--markdown]
"""
import collections
import gzip
import json
import statistics
import sys


def main():
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = "--markdown" in sys.argv
    runs = collections.defaultdict(dict)  # (job, variant) -> {(file, pair): {mode: ms}}
    for i, f in enumerate(files):
        for line in (gzip.open(f, "rt") if f.endswith(".gz") else open(f)):
            r = json.loads(line)
            if r.get("result"):
                runs[(r["job"], r["variant"])].setdefault((i, r["pair"]), {})[r["mode"]] = r["result"]["median_ms"]
    head = ("job", "variant", "pairs", "plain ms", "recorded ms", "paired median", "min", "max")
    if md:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    else:
        print("%-22s %-13s %5s %9s %11s %14s %7s %7s" % head)
    for (job, var), pairs in runs.items():
        both = [p for p in pairs.values() if "plain" in p and "recorded" in p]
        if not both:
            continue
        ratios = sorted(p["recorded"] / p["plain"] for p in both)
        row = (job, var, len(both), "%.2f" % statistics.median(p["plain"] for p in both),
               "%.2f" % statistics.median(p["recorded"] for p in both),
               "%+.1f %%" % (100 * (statistics.median(ratios) - 1)),
               "%+.1f %%" % (100 * (ratios[0] - 1)), "%+.1f %%" % (100 * (ratios[-1] - 1)))
        print(("| " + " | ".join(str(x) for x in row) + " |") if md else
              "%-22s %-13s %5s %9s %11s %14s %7s %7s" % row)


if __name__ == "__main__":
    main()
