"""Contractions of the distributed-workloads seed (001): matmul, bmm, baddbmm and
scaled_dot_product_attention, where a batch or sequence dim is often unbacked.

Operands are built from the same SymInts as the tensor they meet (`ones((k, m))` with
k = x.size(-1), a transpose of x, a narrow of x along the sequence dim), so the contraction dims
agree symbolically and tracing must prove, guard or assert that they match.
"""

from __future__ import annotations

import hypothesis.strategies as st
import torch
import torch.nn.functional as F

from shapefuzz.ir import ProgramError, VType
from shapefuzz.ops.base import Op, expect_choice, expect_tensor, get_op, register
from shapefuzz.ops.choices import sampled_from
from shapefuzz.ops.pointwise import broadcast_shapes

__all__: list[str] = []

FLOAT = ("float",)


def matmul_rank(ra: int, rb: int) -> int:
    if ra == 1 and rb == 1:
        return 0
    if rb == 1:
        return ra - 1
    if ra == 1:
        return rb - 1
    return max(ra, rb)


def _other_operand(ctx, draw, x, rank_b: int):
    """A float tensor whose dim 0 (rank_b 1) or -2 is x's last dim, or None."""
    t = ctx.type(x)
    k = ctx.emit("size", (x, t.rank - 1))[0]
    if rank_b == 1:
        return ctx.emit("ones", ((k,),))[0]
    if t.rank >= 2 and draw(st.booleans()):
        return ctx.emit("transpose", (x, t.rank - 2, t.rank - 1))[0]  # x @ x^T
    m = ctx.pick_int(draw, 0, ctx.settings.max_size, prefer_sym=True)
    return ctx.emit("ones", ((k, m),))[0]


@register
class Matmul(Op):
    name, family = "matmul", "linalg"
    weight = 2

    def out_types(self, args, n_out):
        a, b = args
        ta = expect_tensor(a, "a", FLOAT, min_rank=1)
        tb = expect_tensor(b, "b", FLOAT, min_rank=1)
        if ta.rank > 3 or tb.rank > 3:
            raise ProgramError("matmul operands must have rank 1..3")
        return (VType.tensor("float", matmul_rank(ta.rank, tb.rank)),)

    def eager(self, args, n_out):
        return (torch.matmul(args[0], args[1]),)

    def symbolic(self, args, n_out, s):
        # aten::matmul (C++): dot / mv / mm / a folded or batched bmm; the contraction dims
        # must match (torch._check in the mm/bmm metas), batch dims broadcast
        a, b = args
        ka, kb = a.shape[-1], b.shape[0] if b.rank == 1 else b.shape[-2]
        s.check(ka == kb, lambda: f"size mismatch: contraction dims {ka} and {kb} of matmul")
        batch = broadcast_shapes(s, a.shape[:-2], b.shape[:-2]) if max(a.rank, b.rank) > 2 else ()
        rows = (a.shape[-2],) if a.rank >= 2 else ()
        cols = (b.shape[-1],) if b.rank >= 2 else ()
        return (s.tensor(tuple(batch) + rows + cols, "float"),)

    def source(self, args):
        return f"torch.matmul({args[0]}, {args[1]})"

    def generate(self, ctx, draw):
        x = ctx.pick_tensor(draw, dtypes=FLOAT, min_rank=1, max_rank=3)
        if x is not None:
            ctx.emit(self.name, (x, _other_operand(ctx, draw, x, draw(sampled_from([1, 2])))))


def _bmm_operands(ctx, draw):
    a = ctx.pick_tensor(draw, dtypes=FLOAT, min_rank=3, max_rank=3)
    if a is None:
        return None
    if draw(st.booleans()):
        return a, ctx.emit("transpose", (a, 1, 2))[0]
    b_, k = ctx.emit("size", (a, 0))[0], ctx.emit("size", (a, 2))[0]
    m = ctx.pick_int(draw, 0, ctx.settings.max_size, prefer_sym=True)
    return a, ctx.emit("ones", ((b_, k, m),))[0]


def bmm_shape(s, a, b):
    """torch's common_meta_baddbmm_bmm: [B, N, K] x [B, K, M] -> [B, N, M]."""
    s.check(a.shape[0] == b.shape[0], "batch1 and batch2 must have same number of batches")
    s.check(a.shape[2] == b.shape[1], lambda: f"Expected size for first two dimensions of batch2 "
            f"tensor to be: [{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    return s.tensor((a.shape[0], a.shape[1], b.shape[2]), "float")


def attention_shape(s, q, k, v):
    """scaled_dot_product_attention's output: q's [.., L] with v's last dim; q and k share the
    embedding dim (q @ k^T), k and v the sequence, the batch dims broadcast."""
    s.check(q.shape[-1] == k.shape[-1], lambda: f"q and k embedding dims differ: {q.shape[-1]} "
            f"and {k.shape[-1]}")
    s.check(k.shape[-2] == v.shape[-2], lambda: f"k and v sequence lengths differ: {k.shape[-2]} "
            f"and {v.shape[-2]}")
    batch = broadcast_shapes(s, q.shape[:-2], k.shape[:-2], v.shape[:-2])
    return s.tensor(tuple(batch) + (q.shape[-2], v.shape[-1]), "float")


@register
class Bmm(Op):
    name, family = "bmm", "linalg"
    weight = 1

    def out_types(self, args, n_out):
        a, b = args
        expect_tensor(a, "a", FLOAT, min_rank=3)
        expect_tensor(b, "b", FLOAT, min_rank=3)
        if a.rank != 3 or b.rank != 3:
            raise ProgramError("bmm operands must have rank 3")
        return (VType.tensor("float", 3),)

    def eager(self, args, n_out):
        return (torch.bmm(args[0], args[1]),)

    def symbolic(self, args, n_out, s):
        return (bmm_shape(s, *args),)

    def source(self, args):
        return f"torch.bmm({args[0]}, {args[1]})"

    def generate(self, ctx, draw):
        ops = _bmm_operands(ctx, draw)
        if ops is not None:
            ctx.emit(self.name, ops)


@register
class Baddbmm(Op):
    """baddbmm(input, a, b): input broadcasts against the [B, N, M] product."""

    name, family = "baddbmm", "linalg"
    weight = 1

    def out_types(self, args, n_out):
        inp, a, b = args
        ti = expect_tensor(inp, "input", FLOAT)
        for t, what in ((a, "batch1"), (b, "batch2")):
            if expect_tensor(t, what, FLOAT).rank != 3:
                raise ProgramError(f"baddbmm {what} must have rank 3")
        if ti.rank > 3:
            raise ProgramError("baddbmm input must have rank <= 3")
        return (VType.tensor("float", 3),)

    def eager(self, args, n_out):
        return (torch.baddbmm(args[0], args[1], args[2]),)

    def symbolic(self, args, n_out, s):
        # common_meta_baddbmm_bmm: the product's checks, then self.expand(B, N, M)
        inp, a, b = args
        prod = bmm_shape(s, a, b)
        return get_op("expand").symbolic((inp, prod.shape), 1, s)

    def source(self, args):
        return f"torch.baddbmm({args[0]}, {args[1]}, {args[2]})"

    def generate(self, ctx, draw):
        ops = _bmm_operands(ctx, draw)
        if ops is None:
            return
        a, b = ops
        prod = ctx.emit("bmm", (a, b))[0]  # the input has the product's shape, or broadcasts
        shape = [ctx.emit("size", (prod, d))[0] for d in range(3)]
        keep = draw(st.lists(st.booleans(), min_size=3, max_size=3))
        inp = ctx.emit("ones", (tuple(s if k else 1 for s, k in zip(shape, keep)),))[0]
        ctx.emit(self.name, (inp, a, b))


SDPA_MODES = {"plain": False, "causal": True}


@register
class Attention(Op):
    """F.scaled_dot_product_attention(q, k, v): [.., L, E] x [.., S, E] x [.., S, Ev]."""

    name, family = "sdpa", "linalg"
    weight = 1

    def out_types(self, args, n_out):
        q, k, v, mode = args
        tq = expect_tensor(q, "q", FLOAT, min_rank=3)
        for t, what in ((k, "k"), (v, "v")):
            if expect_tensor(t, what, FLOAT, min_rank=3).rank != tq.rank:
                raise ProgramError(f"sdpa {what} must have q's rank")
        if tq.rank > 4:
            raise ProgramError("sdpa operands must have rank 3 or 4")
        expect_choice(mode, SDPA_MODES, "mode")
        return (VType.tensor("float", tq.rank),)

    def eager(self, args, n_out):
        q, k, v, mode = args
        return (F.scaled_dot_product_attention(q, k, v, is_causal=SDPA_MODES[mode]),)

    def symbolic(self, args, n_out, s):
        q, k, v, _ = args
        return (attention_shape(s, q, k, v),)

    def source(self, args):
        q, k, v, mode = args
        return (f"torch.nn.functional.scaled_dot_product_attention({q}, {k}, {v}, "
                f"is_causal={SDPA_MODES[mode]})")

    def generate(self, ctx, draw):
        q = ctx.pick_tensor(draw, dtypes=FLOAT, min_rank=3, max_rank=4)
        if q is None:
            return
        seq = ctx.type(q).rank - 2
        kv = q
        if draw(st.booleans()):  # a shorter key/value sequence: S != L, often unbacked
            n = ctx.val(q).shape[seq]
            length = ctx.pick_int(draw, 0, n, prefer_sym=True)
            kv = ctx.emit("narrow", (q, seq, 0, length))[0]
        ctx.emit(self.name, (q, kv, kv, draw(sampled_from(sorted(SDPA_MODES)))))


def _no_mod(score, b, h, q_idx, kv_idx):
    return score


def _causal(score, b, h, q_idx, kv_idx):
    return torch.where(q_idx >= kv_idx, score, -float("inf"))


def _relative(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx).float()


#: score_mod name -> (function, its source as a lambda for repro.py)
SCORE_MODS = {
    "none": (_no_mod, "lambda score, b, h, q, kv: score"),
    "causal": (_causal, "lambda score, b, h, q, kv: torch.where(q >= kv, score, -float('inf'))"),
    "relative": (_relative, "lambda score, b, h, q, kv: score + (q - kv).float()"),
}


@register
class FlexAttention(Op):
    """flex_attention(q, k, v, score_mod) on [B, H, L, E] x [B, H, S, E]: opt-in, since its
    first eager call compiles for seconds and each trace costs about one."""

    name, family = "flex_attention", "flex"
    opt_in = True

    def out_types(self, args, n_out):
        q, k, v, mod = args
        for t, what in ((q, "q"), (k, "k"), (v, "v")):
            if expect_tensor(t, what, FLOAT, min_rank=4).rank != 4:
                raise ProgramError(f"flex_attention {what} must have rank 4")
        expect_choice(mod, SCORE_MODS, "score_mod")
        return (VType.tensor("float", 4),)

    def eager(self, args, n_out):
        from torch.nn.attention.flex_attention import flex_attention

        q, k, v, mod = args
        return (flex_attention(q, k, v, score_mod=SCORE_MODS[mod][0]),)

    def symbolic(self, args, n_out, s):
        q, k, v, _ = args
        return (attention_shape(s, q, k, v),)

    def source(self, args):
        q, k, v, mod = args
        return (f"torch.nn.attention.flex_attention.flex_attention({q}, {k}, {v}, "
                f"score_mod={SCORE_MODS[mod][1]})")

    def generate(self, ctx, draw):
        q = ctx.pick_tensor(draw, dtypes=FLOAT, min_rank=4, max_rank=4)
        if q is None:  # make one from a float tensor: [1, 1, n, e]
            x = ctx.pick_tensor(draw, dtypes=FLOAT, min_rank=2, max_rank=2)
            if x is None:
                return
            q = ctx.emit("unsqueeze", (ctx.emit("unsqueeze", (x, 0))[0], 0))[0]
        kv = q
        if draw(st.booleans()):
            n = ctx.val(q).shape[2]
            kv = ctx.emit("narrow", (q, 2, 0, ctx.pick_int(draw, 1, max(n, 1), prefer_sym=True)))[0]
        ctx.emit(self.name, (q, kv, kv, draw(sampled_from(sorted(SCORE_MODS)))))
