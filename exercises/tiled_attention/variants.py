"""tiled_attention: the exact result, and what each usual mistake gives instead, computed here in
float64 on the CPU; `output_cause` names the mistake a wrong output matches, in numbers. Loaded by
path (sibling_module), never imported by name."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from quizapp.checking.harness import Tol, close_elements, fmt, sibling_module

scn = sibling_module(__file__, "scenarios")

# A float32 output is within ~1e-6 of the float64 value of the same formula; the mistakes below move
# an output by 1e-2 or more on the checked inputs. Matching a mistake uses this looser bound.
MATCH = Tol(rtol=1e-4, atol=1e-4)


def exact(c) -> torch.Tensor:
    """SDPA in float64 on the values the solution was given: the contract's reference."""
    q, k, v = scn.exact_inputs(c)
    return F.scaled_dot_product_attention(q, k, v, is_causal=c.causal)


def masked(q, k, v, keep, scale) -> torch.Tensor:
    """Attention with the boolean mask `keep` (True: seen) over full rows; a row that sees no key is NaN."""
    s = (q @ k.transpose(-2, -1)) * scale
    if keep is not None:
        s = s.masked_fill(~keep, -math.inf)
    return torch.softmax(s, dim=-1) @ v


def online(q, k, v, block, scale, *, rescale_sum=True, rescale_acc=True, carry_max=True) -> torch.Tensor:
    """The online softmax over key blocks (no mask), with parts of it left out on purpose."""
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype)
    row_sum = torch.zeros_like(m)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for start in range(0, k.shape[-2], block):
        s = (q @ k[..., start:start + block, :].transpose(-2, -1)) * scale
        block_max = s.amax(dim=-1, keepdim=True)
        m_new = torch.maximum(m, block_max) if carry_max else block_max
        alpha = torch.exp(m - m_new) if carry_max else torch.ones_like(m)
        p = torch.exp(s - m_new)
        row_sum = (row_sum * alpha if rescale_sum else row_sum) + p.sum(dim=-1, keepdim=True)
        acc = (acc * alpha if rescale_acc else acc) + p @ v[..., start:start + block, :]
        m = m_new
    return acc / row_sum


def block_average(q, k, v, block, scale) -> torch.Tensor:
    """The mean over key blocks of each block's own softmax attention."""
    outs = [masked(q, k[..., s:s + block, :], v[..., s:s + block, :], None, scale)
            for s in range(0, k.shape[-2], block)]
    return torch.stack(outs).mean(0)


def running_maxima(q, k, block, scale, row) -> list[float]:
    """The running max of one query row (an index (b, h, i)) after each key block."""
    b, h, i = row
    s = (q[b, h, i] @ k[b, h].transpose(-2, -1)) * scale
    return [float(s[:stop].max()) for stop in range(block, k.shape[-2] + block, block)]


def masks(c) -> dict:
    """The causal masks a solution may have built by mistake, (Nq, Nk) booleans, True: seen."""
    ones = torch.ones(c.nq, c.nk, dtype=torch.bool)
    local = (torch.arange(c.nk) % c.block)[None, :] <= torch.arange(c.nq)[:, None]
    return {
        "bottom-right": ones.tril(c.nk - c.nq),
        "strict": ones.tril(-1),
        "one-more": ones.tril(1),
        "none": ones,
        "block-local": local,
    }


def rows_text(rows: list[int], word: str = "") -> str:
    """'rows 0-11', 'row 3', 'rows 1, 4 and 7' (the word left out when not asked for)."""
    head = f"{word}{'s' if len(rows) != 1 else ''} " if word else ""
    if rows == list(range(rows[0], rows[0] + len(rows))) and len(rows) > 2:
        return f"{head}{rows[0]}-{rows[-1]}"
    shown = ", ".join(str(r) for r in rows[:6])
    return head + shown + (f" and {len(rows) - 6} more" if len(rows) > 6 else "")


def _matches(seen: torch.Tensor, wanted: torch.Tensor) -> bool:
    """Whether `seen` equals `wanted` wherever `wanted` is finite (rows that see no key are NaN there)."""
    finite = wanted.isfinite()
    if not bool(finite.any()):
        return False
    return bool(close_elements(seen, wanted, MATCH)[finite].all())


def _worst_row(seen: torch.Tensor, want: torch.Tensor) -> tuple[int, int, int]:
    diff = torch.where(seen.isfinite(), (seen - want).abs(), torch.inf)
    flat = int(diff.amax(-1).flatten().argmax())
    b, rest = divmod(flat, want.shape[1] * want.shape[2])
    return b, *divmod(rest, want.shape[2])


def keys_text(c, n: int) -> str:
    start, stop = n * c.block, min((n + 1) * c.block, c.nk)
    return f"key {start}" if stop - start == 1 else f"keys {start}-{stop - 1}"


def _growth(q, k, c, row, scale) -> str:
    """Where the running max of `row` grew the most, in words."""
    maxima = running_maxima(q, k, c.block, scale, row)
    jumps = [(maxima[n] - maxima[n - 1], n) for n in range(1, len(maxima))]
    jump, n = max(jumps, default=(0.0, 0))
    if jump <= 0:
        return f"in row {list(row)} the running max never grew"
    a, b = maxima[n - 1], maxima[n]
    return (f"in row {list(row)} the running max grew from {a:.4g} to {b:.4g} at key block {n} ({keys_text(c, n)}), "
            f"where the terms kept so far must be multiplied by exp({a:.4g} - {b:.4g}) = {math.exp(a - b):.3g}")


def _block_maxima(q, k, c, row, scale) -> str:
    """Each key block's own max in `row`, in words."""
    b, h, i = row
    s = (q[b, h, i] @ k[b, h].transpose(-2, -1)) * scale
    own = [float(s[start:start + c.block].max()) for start in range(0, c.nk, c.block)]
    shown = ", ".join(f"{x:.4g}" for x in own[:6]) + (", ..." if len(own) > 6 else "")
    return f"in row {list(row)} the blocks' own maxima are {shown}, the row's max {max(own):.4g}"


def formula_causes(c, q, k, v, seen, want) -> list[tuple[torch.Tensor, str]]:
    """(what the mistake gives, what to say) for mistakes of the online softmax itself (no mask)."""
    d, dv, nk, block = c.d, c.dv, c.nk, c.block
    root = 1 / math.sqrt(d)
    row = _worst_row(seen, want)
    grew = _growth(q, k, c, row, root)
    out = [
        (masked(q, k, v, None, 1 / d), f"it matches attention with the scores scaled by 1/D = {fmt(1 / d)}, not "
         f"by SDPA's default 1/sqrt(D) = {root:.4g} (D = {d})"),
        (masked(q, k, v, None, 1.0), f"it matches attention with unscaled scores q . k: SDPA's default scale is "
         f"1/sqrt(D) = {root:.4g} (D = {d})"),
        (masked(q, k, v, None, math.sqrt(d)), f"it matches scores multiplied by sqrt(D) = {math.sqrt(d):.4g} "
         f"instead of divided by it"),
    ]
    if dv != d:
        out.append((masked(q, k, v, None, 1 / math.sqrt(dv)), f"it matches attention scaled by 1/sqrt(Dv) = "
                    f"{1 / math.sqrt(dv):.4g}: the scale is 1/sqrt(D) = {root:.4g}, with D the width of q and k "
                    f"(q.shape[-1] = {d}), not v's width Dv = {dv}"))
    if nk % block:
        full = nk - nk % block
        if full:
            out.append((masked(q, k[..., :full, :], v[..., :full, :], None, root),
                        f"it matches attention over the first {full} keys only: the last, shorter block (keys "
                        f"{full}-{nk - 1}) was dropped; range(0, Nk, block_size) visits it, and the slice "
                        "k[..., start:start + block_size] simply comes out shorter"))
        pad = block - nk % block
        padded_k = F.pad(k, (0, 0, 0, pad))
        padded_v = F.pad(v, (0, 0, 0, pad))
        out.append((masked(q, padded_k, padded_v, None, root),
                    f"it matches attention with {pad} extra keys of score 0 and value 0: k and v were padded to a "
                    f"multiple of block_size ({nk} -> {nk + pad}) and the padding took part in the softmax; give "
                    "padded keys a score of -inf, or slice the last block shorter"))
    out += [
        (online(q, k, v, block, root, rescale_sum=False), f"it matches the online softmax with the running sum "
         f"not rescaled when the max grows (the output accumulator was): {grew}"),
        (online(q, k, v, block, root, rescale_acc=False), f"it matches the online softmax with the output "
         f"accumulator not rescaled when the max grows (the running sum was): {grew}"),
        (online(q, k, v, block, root, rescale_sum=False, rescale_acc=False), f"it matches the online softmax "
         f"with neither the running sum nor the output accumulator rescaled when the max grows: {grew}"),
        (online(q, k, v, block, root, carry_max=False), "it matches attention where each key block's exponentials "
         "are taken against that block's own max, with no running max carried from block to block: "
         f"{_block_maxima(q, k, c, row, root)}; keep m = max(m, block max) across blocks and rescale the running sum "
         "and the accumulator by exp(m_old - m_new)"),
        (block_average(q, k, v, block, root), "it matches the average of each key block's own softmax attention: "
         "every block was normalised on its own; keep one running max and sum per row and divide once, after "
         "the last block"),
    ]
    return out


def mask_causes(c, q, k, v) -> list[tuple[torch.Tensor, str]]:
    root = 1 / math.sqrt(c.d)
    found = masks(c)
    shift = c.nk - c.nq
    out = []
    if shift:
        out.append((found["bottom-right"], f"it matches the bottom-right-aligned causal mask tril(Nk - Nq) = "
                    f"tril({shift}) (FlashAttention-2's causal=True, for new queries after a KV cache): query i sees "
                    f"keys j <= i {'+' if shift > 0 else '-'} {abs(shift)}; SDPA's is_causal is top-left, query i "
                    "sees keys j <= i whatever Nq and Nk"))
    out += [
        (found["strict"], "it matches the mask j < i (tril(-1)): each query must see its own key too, j <= i"),
        (found["one-more"], "it matches the mask j <= i + 1 (tril(1)): one key too many; query i sees keys j <= i"),
        (found["none"], "it matches attention with no mask at all: causal=True was ignored"),
    ]
    if c.blocks > 1:
        out.append((found["block-local"], "it matches a mask that compares the query index with each key's index "
                    "within its block (j - start <= i); compare it with the key's own index, start + column"))
    return [(masked(q, k, v, keep, root), words) for keep, words in out]


def empty_rows(wanted: torch.Tensor) -> list[int]:
    """The query rows a variant leaves without any key (NaN rows), as indices i."""
    rows = wanted.isnan().any(-1).any(0).any(0)
    return rows.nonzero().flatten().tolist()


def nan_cause(c, seen: torch.Tensor, want: torch.Tensor) -> str:
    """Why NaN came out where the result is finite: a key block fully masked for those rows."""
    bad = (seen.isnan().any(-1) & want.isfinite().all(-1)).any(0).any(0).nonzero().flatten().tolist()
    if not bad:
        return ""
    if not c.causal:
        return f"; {rows_text(bad, 'row')} of the output {'is' if len(bad) == 1 else 'are'} NaN though SDPA's are finite"
    masked_rows = [i for i in bad if any(start > i for start in range(0, c.nk, c.block))]
    text = f"; {rows_text(bad, 'row')} of the output {'is' if len(bad) == 1 else 'are'} NaN, though every query sees key 0"
    if masked_rows and len(masked_rows) == len(bad):
        i = masked_rows[0]
        start = next(s for s in range(0, c.nk, c.block) if s > i)
        text += (f". Each of them has key blocks lying wholly above the diagonal (row {i}: block {start // c.block}, "
                 f"{keys_text(c, start // c.block)}, all masked): a max taken over such a block alone "
                 "is -inf, and exp(-inf - (-inf)) = NaN, which no later block repairs. Take the new running max "
                 "m_new = max(m, block max) before exponentiating (finite from block 0 on, which holds key 0), or "
                 "skip blocks that lie above the diagonal")
    return text


def output_cause(c, seen: torch.Tensor, want: torch.Tensor | None = None) -> str:
    """'; it matches ...' naming the mistake that gives `seen` for case `c`, or '' when none does."""
    if not isinstance(seen, torch.Tensor) or tuple(seen.shape) != (c.b, c.h, c.nq, c.dv):
        return ""
    seen = seen.detach().to("cpu", torch.float64)
    want = exact(c) if want is None else want
    q, k, v = scn.exact_inputs(c)
    causes = mask_causes(c, q, k, v) if c.causal else formula_causes(c, q, k, v, seen, want)
    for wanted, words in causes:
        if _matches(seen, wanted) and not _matches(want, wanted):  # a mistake these inputs cannot tell apart: none
            empty = empty_rows(wanted)
            if empty:
                words += (f"; under that mask {rows_text(empty, 'row')} {'sees' if len(empty) == 1 else 'see'} no "
                          "key at all (yours: "
                          f"{'NaN' if bool(seen[..., empty, :].isnan().any()) else 'finite values'} there)")
            return "; " + words
    if c.nk < c.block and bool(seen.isnan().all() or not seen.any()):
        return (f"; every output is {'NaN' if bool(seen.isnan().all()) else '0'}: Nk = {c.nk} is smaller than "
                f"block_size = {c.block}, so the one key block is the short last one, and a loop over whole "
                "blocks (range(Nk // block_size)) visits none")
    return nan_cause(c, seen, want)
