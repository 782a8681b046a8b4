"""switchgate's benchmark suite: a fast fake upstream, a closed-loop load generator,
scenarios, and a side-by-side run against LiteLLM's proxy. Entry: `python -m bench.run`."""
