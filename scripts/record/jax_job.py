"""A JAX training step for `gpudoctor record`'s checks: an MLP trained with SGD by a jitted step,
STEPS times, block_until_ready after each. Prints one JSON line with the step times.
  python3 jax_job.py [--steps 30]
"""
import argparse
import json
import os
import statistics
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax
import jax.numpy as jnp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()
    key = jax.random.PRNGKey(0)
    sizes = [1024, 2048, 2048, 1024, 10]
    params = []
    for i in range(len(sizes) - 1):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (sizes[i], sizes[i + 1])) * 0.02, jnp.zeros(sizes[i + 1])))
    x = jax.random.normal(key, (256, 1024))
    y = jax.random.randint(key, (256,), 0, 10)

    def loss(p, x, y):
        h = x
        for w, b in p[:-1]:
            h = jax.nn.relu(h @ w + b)
        logits = h @ p[-1][0] + p[-1][1]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])

    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g), l

    for _ in range(a.warmup):
        params, l = step(params, x, y)
        l.block_until_ready()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter_ns()
        params, l = step(params, x, y)
        l.block_until_ready()
        times.append(time.perf_counter_ns() - t0)
    print(json.dumps({"steps": len(times), "median_step_ns": int(statistics.median(times)), "step_ns": times,
                      "backend": jax.default_backend()}), flush=True)


if __name__ == "__main__":
    main()
