"""codecage inside the agent frameworks people build with.

Each module imports its framework only when it is imported itself, and
says which extra to install when the framework is missing:

- ``codecage.integrations.pydantic_ai``: :class:`CodeMode`, a pydantic-ai
  toolset: the model gets one ``run_python`` / ``run_javascript`` tool,
  the agent's other tools become ``tools.NAME(...)`` in the guest
  (``pip install 'codecage[pydantic-ai]'``).
- ``codecage.integrations.fastmcp``: ``bind`` (a FastMCP server's tools as
  guest functions) and ``server`` (codecage's run tools as a FastMCP
  server) (``codecage[fastmcp]``).
- ``codecage.integrations.smolagents``: :class:`CodecageExecutor`, a
  remote Python executor for smolagents' ``CodeAgent``
  (``codecage[smolagents]``).
- ``codecage.integrations.langchain``: :class:`CodeInterpreterTool`, a
  ``langchain_core`` tool (``codecage[langchain]``).

The extras' versions are the ones requirements/host.txt pins and the tests
run against.
"""
