"""Run the real model under MemoryDenyWriteExecute, as systemd would apply it.

Usage: python mdwe_probe.py MODEL.gguf seccomp|prctl

seccomp: the filter systemd 252 (Debian bookworm, Raspberry Pi OS) installs for
MemoryDenyWriteExecute=yes — EPERM for mmap(PROT_WRITE|PROT_EXEC), mprotect/pkey_mprotect
with PROT_EXEC and shmat(SHM_EXEC) — built with libseccomp. prctl: the kernel's PR_SET_MDWE,
which newer systemd uses instead. Then it imports llama_cpp, loads the model, generates free
text and JSON under a grammar (ctypes callbacks included), and prints one JSON line.
"""
import ctypes
import ctypes.util
import json
import mmap
import resource
import sys

PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO_EPERM = 0x00050000 | 1
SCMP_CMP_MASKED_EQ = 7
SHM_EXEC = 0o100000


class ScmpArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def apply_seccomp() -> None:
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp") or "libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_exact_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                                 ctypes.c_uint, ctypes.POINTER(ScmpArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    rules = [("mmap", 2, mmap.PROT_WRITE | mmap.PROT_EXEC, mmap.PROT_WRITE | mmap.PROT_EXEC),
             ("mprotect", 2, mmap.PROT_EXEC, mmap.PROT_EXEC),
             ("pkey_mprotect", 2, mmap.PROT_EXEC, mmap.PROT_EXEC),
             ("shmat", 2, SHM_EXEC, SHM_EXEC)]
    for name, arg, mask, value in rules:
        nr = lib.seccomp_syscall_resolve_name(name.encode())
        cmp = ScmpArgCmp(arg, SCMP_CMP_MASKED_EQ, mask, value)
        if lib.seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO_EPERM, nr, 1, ctypes.byref(cmp)) != 0:
            raise SystemExit(f"seccomp rule for {name} failed")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, as NoNewPrivileges=yes; needed to load a filter
    if lib.seccomp_load(ctx) != 0:
        raise SystemExit("seccomp_load failed")


def apply_prctl() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
        raise SystemExit(f"PR_SET_MDWE failed: errno {ctypes.get_errno()}")


def wx_refused() -> bool:
    try:
        mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except OSError:
        return True
    return False


def peak_rss_mb() -> float:
    """VmHWM: this program's own peak RSS. ru_maxrss survives execve, so in a child of a big
    process (pytest holding a loaded model) it reports the parent's RSS at fork time instead."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    model_path, mode = sys.argv[1], sys.argv[2]
    {"seccomp": apply_seccomp, "prctl": apply_prctl}[mode]()
    refused = wx_refused()
    # The service's own runtime path: free text, grammar-constrained output (the argmax-first
    # decoder with its ctypes buffers) and a session snapshot taken and restored.
    import asyncio

    from pydantic import BaseModel, Field

    from edge_agent.llm.llamacpp import LlamaCppModel

    class Reply(BaseModel):
        answer: str = Field(max_length=12)

    model = LlamaCppModel(model_path, n_ctx=4096, n_batch=256, n_threads=1)

    async def run() -> tuple[str, str]:
        free = await model.generate("The capital of France is", max_tokens=8, session="l2:probe")
        await model.generate("An L3 session in between", max_tokens=4)  # snapshots l2:probe
        out = await model.generate_structured("Answer in JSON: what colour is the sky?\n", Reply,
                                              max_tokens=32, session="l2:probe")  # restores it
        return free.text or "(empty)", out.raw

    text, structured = asyncio.run(run())
    assert model.sessions.stats.saves >= 1 and model.sessions.stats.loads >= 1
    print(json.dumps({"mode": mode, "wx_refused": refused, "text": text, "structured": json.loads(structured),
                      "max_rss_mb": peak_rss_mb()}))


if __name__ == "__main__":
    main()
