"""The real tools: one module a tool, each a manifest in tools/ + an argument model + run()."""
