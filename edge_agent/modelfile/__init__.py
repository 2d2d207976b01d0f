"""What is known about a model file before any runtime loads it: its GGUF header, the memory it
needs, and where the configured one lives.

Below both the runtime (`llm/`) and operations (`ops/`): it imports neither, and both import it
(tests/test_import_graph.py checks the direction).
"""
