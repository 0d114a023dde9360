"""Tasks: the request catalogue, composition, the difficulty model and the 100-task exam.

- ``schema``: the task file format (pydantic, strict) and its JSON schema.
- ``state``: the simulated account a call's requests change (pure).
- ``catalogue``: one builder per request kind, from the executable policy model.
- ``compose``: the 112 single cases, recursive composition and its validity rule.
- ``difficulty``: features, the logistic model, results files and the bootstrap prior.
- ``exam``: selection of the 100 hard tasks and the files it writes (``data/``).
- ``replay``: replaying a task through the real tools (``vamos tasks validate``).

The shipped files live in ``data/``: ``exam.json``, ``singles.json``,
``pool_summary.json``, ``task.schema.json`` and ``bootstrap_outcomes.jsonl`` (a prior,
not a measurement). Rebuild them with ``vamos tasks build``.
"""
