"""Subcommands of `edge-agent`, one module a group; each has register(subparsers, parents)."""
