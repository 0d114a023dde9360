"""The local model's speed: tokens per second, time per agent turn and per call, with and
without the server's prompt cache.

Plays one exam call (a short two-request task by default) with the ``local`` stack and a
scripted caller in the clean room, and prints each agent request as llama.cpp timed it:
prompt tokens, how many came from the cache, prompt and generation tokens per second, and
the turn's wall time. ``--no-cache`` sends ``cache_prompt: false``, so every request reads
the whole conversation again (the 4,400-token system prompt and tools included); cap it
with ``--turns``, as each turn then costs minutes on two cores.

Run: .venv/bin/python benchmarks/llm.py [--task ID] [--turns N] [--no-cache] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

SHORT_TASK = "c-a24-enable_paperless.compare_bills-jul"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default=SHORT_TASK)
    parser.add_argument("--turns", type=int, default=60, help="agent turns at most (60)")
    parser.add_argument("--no-cache", action="store_true", help="send cache_prompt: false")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import gymnasium as gym

    import vamos_env  # noqa: F401  (registers the env)
    from vamos_env.llm import server
    from vamos_env.llm.roles import LocalAgent

    started = time.perf_counter()
    url = server.ensure_local_server()
    ready_s = time.perf_counter() - started
    loaded = server.started_here()
    load = f"loaded in {loaded.load_s:.1f} s" if loaded is not None else "already running"
    print(f"server {url}: {load}; ready after {ready_s:.1f} s")

    timings: list[dict[str, Any]] = []

    class TimedAgent(LocalAgent):
        def _take(self, completion: Any, latency_s: float) -> Any:
            extra = getattr(completion, "model_extra", None) or {}
            timings.append({**(extra.get("timings") or {}), "latency_s": latency_s})
            return super()._take(completion, latency_s)

    extra = {"cache_prompt": False} if args.no_cache else {}
    agent = TimedAgent(extra_body=extra)
    env = gym.make("VamosEnergy-v0", recogniser="ideal", max_agent_turns=args.turns)
    observation, info = env.reset(seed=args.seed, options={"task_id": args.task})
    agent.reset(info)
    call_started = time.perf_counter()
    done = False
    while not done:
        observation, _, terminated, truncated, info = env.step(agent.act(observation, info))
        done = terminated or truncated
    call_s = time.perf_counter() - call_started
    agent.close()

    print(
        f"{'req':>4}{'prompt':>8}{'cached':>8}{'read':>7}{'tok/s':>8}{'gen':>6}{'tok/s':>8}{'s':>8}"
    )
    for i, t in enumerate(timings, 1):
        read, gen = int(t.get("prompt_n", 0)), int(t.get("predicted_n", 0))
        cached = int(t.get("cache_n", 0))
        print(
            f"{i:>4}{read + cached:>8}{cached:>8}{read:>7}{t.get('prompt_per_second', 0):>8.1f}"
            f"{gen:>6}{t.get('predicted_per_second', 0):>8.1f}{t['latency_s']:>8.1f}"
        )
    read = sum(int(t.get("prompt_n", 0)) for t in timings)
    gen = sum(int(t.get("predicted_n", 0)) for t in timings)
    prompt_ms = sum(float(t.get("prompt_ms", 0)) for t in timings)
    gen_ms = sum(float(t.get("predicted_ms", 0)) for t in timings)
    verdict = info.get("verdict") or {}
    print(
        f"call: {len(timings)} requests, {call_s:.0f} s, end {info.get('end_reason')}, reward "
        f"{verdict.get('reward')}; prompt {read} tokens read at "
        f"{read / max(prompt_ms / 1000, 1e-9):.1f} tok/s, {gen} generated at "
        f"{gen / max(gen_ms / 1000, 1e-9):.1f} tok/s; cache {'off' if args.no_cache else 'on'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
