"""LLM judges over HTTP: the client (``client``: retries, cache, repair, cost), versioned
prompt files (``prompt`` and ``prompts/``), the wire formats (``openai_compat``,
``anthropic``), the judge (``judge``) and its call families (``batched``, ``graded``,
``conversational``, which depend on the ``prompt.JsonCalls`` protocol, not on the client),
reply parsing (``replies``), the reply cache (``cache``) and model prices (``pricing``)."""
