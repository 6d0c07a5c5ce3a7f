#!/usr/bin/env python3
"""Checks `gpudoctor place --gpus K` against measured bandwidth: for each K, the ring bottleneck of the
chosen GPUs in the measured P2P matrix (slowest hop of the ring place reports, the slower direction)
beside the best ring bottleneck any K of the GPUs reach by measurement (every subset, every ring order:
fine up to 8 GPUs). Prints one line per K and exits 1 if a choice is more than --tolerance below the
measured best.
  place_vs_measured.py TOPO_MEASURE.json PLACE_K2.json [PLACE_K3.json ...] [--tolerance 0.05]"""
import itertools
import json
import sys


def ring_bottleneck(order, p2p):
    if len(order) < 2:
        return float("inf")
    hops = list(zip(order, order[1:] + order[:1])) if len(order) > 2 else [(order[0], order[1])]
    return min(min(p2p[a][b], p2p[b][a]) for a, b in hops)


def best(k, n, p2p):
    top, arg = -1.0, None
    for subset in itertools.combinations(range(n), k):
        first, rest = subset[0], subset[1:]
        for perm in itertools.permutations(rest):  # rings through the first GPU
            v = ring_bottleneck([first, *perm], p2p)
            if v > top:
                top, arg = v, [first, *perm]
    return top, arg


def main(argv):
    tol = 0.05
    if "--tolerance" in argv:
        i = argv.index("--tolerance")
        tol = float(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) < 3:
        print(__doc__)
        return 2
    topo = json.load(open(argv[1]))
    p2p = topo["measured"]["p2p_gbps"]
    n = len(p2p)
    worst = 0.0
    print("K  place's GPUs (ring)      measured ring GB/s   best measured ring GB/s (GPUs)   place / best")
    for path in argv[2:]:
        pl = json.load(open(path))
        ring = pl.get("ring") or pl["gpus"]
        k = len(pl["gpus"])
        got = ring_bottleneck(ring, p2p)
        top, arg = best(k, n, p2p)
        ratio = got / top if top > 0 else 1.0
        worst = max(worst, 1 - ratio)
        print(f"{k:<2} {str(ring):<24} {got:>18.1f}   {top:>12.1f} {str(arg):<18} {ratio:>10.3f}")
    print(f"largest shortfall against the measured best: {100 * worst:.1f} % (tolerance {100 * tol:.0f} %)")
    return 0 if worst <= tol else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
