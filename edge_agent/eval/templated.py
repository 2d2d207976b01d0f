"""A copy of a GGUF with a chat template written into its metadata (gguf-py), for testing the
instruct path on the bundled base model, which has none.

    python -m edge_agent.eval.templated OUT.gguf [--src MODEL.gguf]   # default src: the bundled model

The tensors are copied unchanged; only `tokenizer.chat_template` (ChatML by default) is added.
The bundled Gemma vocabulary has no <|im_start|>/<|im_end|> tokens, so the markers are plain
text to it: what is tested is the runtime's path (render, stop strings, window, KV reuse), not a
model trained on ChatML.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

# ChatML as Qwen2.5 and SmolLM2 use it, without their default system prompts and tool blocks.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def write_templated_copy(src: Path, dst: Path, template: str = CHATML_TEMPLATE) -> Path:
    """Write `src` to `dst` with `template` as its chat template; returns `dst`."""
    return write_metadata_copy(src, dst, {"tokenizer.chat_template": template})


def write_metadata_copy(src: Path, dst: Path, values: dict[str, str | int]) -> Path:
    """Write `src` to `dst` with these metadata keys set (strings, or unsigned 32-bit integers such
    as `<arch>.context_length`); the tensors are copied unchanged. Returns `dst`."""
    import gguf
    from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

    src, dst = Path(src), Path(dst)
    reader = gguf.GGUFReader(src, "r")
    arch_field = reader.get_field(gguf.Keys.General.ARCHITECTURE)
    if arch_field is None:
        raise ValueError(f"{src}: no general.architecture in the GGUF header")
    tmp = dst.with_name(dst.name + ".tmp")
    writer = gguf.GGUFWriter(tmp, arch=arch_field.contents(), endianess=reader.endianess)
    alignment = reader.get_field(gguf.Keys.General.ALIGNMENT)
    if alignment is not None:
        writer.data_alignment = alignment.contents()
    try:
        kinds = {str: gguf.GGUFValueType.STRING, int: gguf.GGUFValueType.UINT32}
        copy_with_new_metadata(reader, writer, {key: MetadataDetails(kinds[type(value)], value)
                                                for key, value in values.items()}, [])
        tmp.replace(dst)
    finally:
        tmp.unlink(missing_ok=True)
    return dst


def main(argv: list[str] | None = None) -> int:
    """Write a ChatML-templated copy of a GGUF (default: the bundled model)."""
    parser = argparse.ArgumentParser(prog="python -m edge_agent.eval.templated", description=main.__doc__)
    parser.add_argument("out", type=Path, help="the copy to write")
    parser.add_argument("--src", type=Path, help="GGUF to copy (default: the bundled model in the data dir)")
    args = parser.parse_args(argv)
    src = args.src
    if src is None:
        from edge_agent.config import load_settings
        from edge_agent.llm.bundled import ensure_bundled_model

        src = ensure_bundled_model(load_settings().models_dir)
    print(write_templated_copy(src, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
