"""list_devices(): the user's devices, their ids and whether they are reachable (plumbing; not for L2)."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from edge_agent.tools.base import Tool, ToolContext, ToolResult


class ListDevicesArgs(BaseModel):
    """list_devices takes no arguments."""

    model_config = ConfigDict(extra="forbid")


class ListDevices(Tool[ListDevicesArgs]):
    """This device (online), paired devices (as the net layer reports them) and devices known to the index."""

    name = "list_devices"
    Args = ListDevicesArgs

    async def run(self, args: ListDevicesArgs, ctx: ToolContext) -> ToolResult:
        devices: dict[str, dict] = {}
        for known in await ctx.store.files.devices():
            devices[known["id"]] = {"id": known["id"], "name": known["name"], "online": False}
        if ctx.list_remote_devices is not None:
            for peer in await ctx.list_remote_devices():
                entry = devices.setdefault(peer["id"], {"id": peer["id"], "name": peer.get("name") or peer["id"]})
                entry["online"] = bool(peer.get("online"))
        here = devices.setdefault(ctx.device_id, {"id": ctx.device_id, "name": ctx.device_id})
        here["online"] = True
        listed = sorted(devices.values(), key=lambda d: (d["id"] != ctx.device_id, d["id"]))
        lines = [f"{len(listed)} devices:"] + [
            f"- {d['name']} (id {d['id']}){' — this device' if d['id'] == ctx.device_id else ''}, "
            f"{'online' if d['online'] else 'offline'}" for d in listed]
        return ToolResult("\n".join(lines), listed)
