"""The probes' gauge of the host's speed, shared so that their host_probe_ns figures compare: the median
ns of one tiny CPU operator (torch.add on a 1-element CPU tensor) over 200 single calls, timer included."""
import statistics
import time

import torch


def host_probe():
    a = torch.ones(1)
    ts = []
    for _ in range(200):
        t0 = time.perf_counter_ns()
        torch.add(a, a)
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts)
