"""sequence_logprobs' side of dpo_loss's checks: the batches, one call of the learner's function, and the
usual wrong sums, each computed here in float64 so that a wrong answer can be named by the one it matches."""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from quizapp.checking.harness import Tol, close_elements, fail, fmt, nothing_to_check

VOCAB, LENGTH = 13, 10
# (prompt tokens, response tokens) of each row, right-padded to LENGTH. The last row has no response, yet its
# loss_mask[:, 0] is true: position 0 is never predicted, so that row's sum is 0.
ROWS = ((1, 7), (3, 7), (4, 3), (2, 0))
# The low-precision batches: the first row counts 40 tokens, the second 30 between a prompt and padding.
LONG_ROWS, LONG_LENGTH, LONG_VOCAB = ((1, 40), (5, 30)), 41, 32
PAD = -100  # Hugging Face's label pad
MASKS = {"bool": torch.bool, "int64": torch.int64, "float": torch.float32}
# The rows of (out * ROW_WEIGHTS).sum(), the scalar whose gradient is compared: unequal, one negative.
ROW_WEIGHTS = (1.0, -0.5, 2.0, 0.75)
TOLS = {torch.float64: Tol(rtol=1e-10, atol=1e-10), torch.float32: Tol(rtol=1e-5, atol=1e-4)}
BIG = 1e4


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass
class Batch:
    logits: torch.Tensor  # (B, L, V) in the dtype the learner gets
    ids: torch.Tensor  # (B, L), a valid id at every position
    mask: torch.Tensor  # (B, L) in the kind the learner gets
    rows: tuple
    where: str

    def padded_ids(self) -> torch.Tensor:
        """The ids with -100 wherever loss_mask is false: prompt, padding and position 0."""
        return torch.where(self.mask != 0, self.ids, torch.full_like(self.ids, PAD))

    def row_text(self, b: int) -> str:
        prompt, response = self.rows[b]
        length = self.ids.shape[1]
        parts = [f"prompt 0-{prompt - 1}" if prompt > 1 else "prompt 0"]
        parts.append(f"response {prompt}-{prompt + response - 1}" if response else "no response")
        if prompt + response < length:
            parts.append(f"padding {prompt + response}-{length - 1}")
        if bool(self.mask[b, 0] != 0):
            parts.append(f"loss_mask[{b}, 0] true")
        return f"row {b} ({', '.join(parts)})"


def make_batch(device, *, dtype=torch.float64, mask="bool", seed=0, scale=2.0, rows=ROWS, length=LENGTH,
               vocab=VOCAB) -> Batch:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(len(rows), length, vocab, generator=g, dtype=torch.float64) * scale
    ids = torch.randint(0, vocab, (len(rows), length), generator=g)
    flags = torch.zeros(len(rows), length, dtype=torch.bool)
    for b, (prompt, response) in enumerate(rows):
        flags[b, prompt:prompt + response] = True
        if response == 0:
            flags[b, 0] = True  # counts for nothing: position 0 is never predicted
    size = f", logits ~{scale:.0e}" if scale >= BIG else ""
    where = f"{dtype_name(dtype)} logits {tuple(logits.shape)}{size}, {mask} loss_mask"
    return Batch(logits.to(device, dtype), ids.to(device), flags.to(device, MASKS[mask]), rows, where)


@dataclass
class Run:
    out: torch.Tensor  # (B,), detached
    grad: torch.Tensor | None  # of (out * ROW_WEIGHTS).sum() w.r.t. the logits
    requires_grad: bool


def call(ctx, batch: Batch, *, ids=None, logits=None, grad=True, where=None) -> Run:
    """The learner's sequence_logprobs on copies of the batch; its backward when the result allows one."""
    x = (batch.logits if logits is None else logits).detach().clone().requires_grad_(grad)
    ids = batch.ids if ids is None else ids
    where = where or batch.where
    with ctx.given(where):
        out = ctx.solution.sequence_logprobs(x, ids.clone(), batch.mask.clone())
        out = vector(out, len(batch.rows), where)
        wants_grad = grad and out.requires_grad and out.is_floating_point()
        if wants_grad:
            weights = torch.tensor(ROW_WEIGHTS[:len(batch.rows)], dtype=out.dtype, device=out.device)
            (out * weights).sum().backward()
    return Run(out.detach(), x.grad if wants_grad else None, out.requires_grad)


def vector(out, rows: int, where: str) -> torch.Tensor:
    if not isinstance(out, torch.Tensor):
        fail(f"{where}: sequence_logprobs returned a {type(out).__name__}; expected a tensor of shape ({rows},), one "
             "sum per row")
    if tuple(out.shape) != (rows,):
        more = (": that is one value per position; sum over the positions (dim=-1)" if out.dim() == 2 else
                ": that is one number for the whole batch; sum over the positions of each row (dim=-1) only"
                if out.numel() == 1 else "")
        fail(f"{where}: sequence_logprobs returned shape {tuple(out.shape)}; expected ({rows},), one sum per row{more}")
    return out


def truth(batch: Batch, reference) -> torch.Tensor:
    """The right sums, in float64, of the very values the learner got."""
    return reference.sequence_logprobs(batch.logits.detach().double(), batch.ids, batch.mask).cpu()


def truth_grad(batch: Batch, reference) -> torch.Tensor:
    x = batch.logits.detach().double().requires_grad_(True)
    out = reference.sequence_logprobs(x, batch.ids, batch.mask)
    (out * torch.tensor(ROW_WEIGHTS[:len(batch.rows)], dtype=out.dtype, device=out.device)).sum().backward()
    return x.grad.cpu()


def summed_nothing(run) -> None:
    """Skip a check that a function returning zeros would pass: nothing was summed to judge."""
    if not bool(run.out.ne(0).any()):
        nothing_to_check("sequence_logprobs returned 0 for every row: no log-probability was summed")


def result_dtype(logits_dtype):
    return torch.float64 if logits_dtype == torch.float64 else torch.float32


def worst_row(seen: torch.Tensor, want: torch.Tensor, tol: Tol) -> int:
    seen, want = seen.double().cpu(), want.double().cpu()
    off = ~close_elements(seen, want, tol)
    gap = torch.where(seen.isfinite(), (seen - want).abs(), math.inf)
    return int(torch.where(off, gap, -1.0).argmax())


def sums_differ(batch, seen, want, tol, against) -> tuple[str, int] | None:
    """(row r's value and what it should be, in words; r), r the worst row, or None when every row is close."""
    off = ~close_elements(seen, want, tol)
    if not bool(off.any()):
        return None
    r = worst_row(seen, want, tol)
    return (f"{batch.row_text(r)} gives {fmt(float(seen[r]))}; expected {against(r)} ({int(off.sum())} of "
            f"{len(off)} rows are off; tolerance {tol.rtol:.0e} relative + {tol.atol:.0e})"), r


INPUT_CAUSES = {
    "input_ids": "an assignment into the caller's ids (input_ids[~mask] = 0 to make -100 safe for gather): "
                 "the caller reads them again (the reference model's pass, the next epoch). torch.where(mask, "
                 "input_ids, 0) makes a new tensor",
    "loss_mask": "an assignment into the caller's mask (loss_mask[:, 0] = 0): make a new one (loss_mask[:, 1:] != 0)",
    "logits": "an in-place op on the logits (sub_, masked_fill_, an assignment): log_softmax returns a new tensor",
}


# -- the wrong sums --------------------------------------------------------------------------------

def scored(batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """(log_softmax of the logits in float64 on the CPU, log p(token t | logits t - 1) for t >= 1)."""
    lp = F.log_softmax(batch.logits.detach().double().cpu(), dim=-1)
    return lp, lp[:, :-1].gather(-1, batch.ids.cpu()[:, 1:, None]).squeeze(-1)


def variants(batch: Batch) -> list[tuple[str, str, torch.Tensor]]:
    """(what the value is, why it is wrong, the (B,) float64 value) for the usual mistakes; NaN where a
    variant has no value (a mean over no token)."""
    lp, per_token = scored(batch)
    ids, mask = batch.ids.cpu(), batch.mask.cpu() != 0
    last = ids.shape[1] - 1
    unshifted = lp.gather(-1, ids[..., None]).squeeze(-1)  # log p(token t | logits t), t >= 0
    counted = mask[:, 1:]
    right = (per_token * counted).sum(-1)
    count = counted.sum(-1)
    wrapped = lp[:, last].gather(-1, ids[:, :1]).squeeze(-1)  # the last logits scored against token 0
    return [
        ("the sum over the counted tokens t of log_softmax(logits[t])[input_ids[t]]",
         "the logits were not shifted. The logits at t - 1 predict token t: score logits[:, :-1] against "
         "input_ids[:, 1:] with loss_mask[:, 1:]", (unshifted * mask).sum(-1)),
        ("the sum over the counted tokens t >= 1 of log_softmax(logits[t])[input_ids[t]]",
         "the logits were not shifted. The logits at t - 1 predict token t: score logits[:, :-1] against "
         "input_ids[:, 1:] with loss_mask[:, 1:]", (unshifted[:, 1:] * counted).sum(-1)),
        ("the mean over its counted tokens",
         "that is a mean over the tokens, not a sum. DPO's log pi(y|x) is the log-probability of the whole "
         "response, the sum of its tokens' log-probabilities; a mean rescales chosen and rejected by different "
         "lengths", torch.where(count > 0, right / count.clamp(min=1), math.nan)),
        (f"the mean over all {last} predicted positions", "that is a mean, not a sum, and over masked positions too",
         right / last),
        ("the sum over every position t >= 1, prompt and padding included",
         "the mask was ignored: only the response tokens count (loss_mask[:, 1:]); the prompt and the padding "
         "must not", per_token.sum(-1)),
        (f"the right sum plus log_softmax(logits[{last}])[input_ids[0]] where loss_mask[:, 0] is true",
         "position 0 was counted: torch.roll(..., -1) wraps the first token round to the last logits, which "
         "predict nothing. Position 0 is never predicted: drop it (logits[:, :-1] against input_ids[:, 1:]), "
         "or zero the mask of the last position after rolling", right + mask[:, 0] * wrapped),
        ("the sum with loss_mask[:, :-1] paired with input_ids[:, 1:]",
         "the mask was not shifted with the tokens: loss_mask[:, t] marks token t, so the tokens "
         "input_ids[:, 1:] go with loss_mask[:, 1:]", (per_token * mask[:, :-1]).sum(-1)),
        ("minus the right sum", "the sign is flipped: these are log-probabilities (<= 0), not a loss", -right),
    ]


def diagnose(seen: torch.Tensor, batch: Batch, tol: Tol, row: int) -> str:
    """'; X is ... (every row matches it): cause' for the first variant that every row matches, X being row
    `row`'s value, else ''."""
    seen = seen.detach().double().cpu()
    for what, cause, value in variants(batch):
        known = value.isfinite()
        if bool(known.any()) and bool(close_elements(seen[known], value[known], tol).all()):
            return f"; {fmt(float(seen[row]))} is {what} (every row matches it): {cause}"
    return ""


def low_precision_variant(batch: Batch) -> torch.Tensor:
    """log_softmax taken in the logits' own (half) dtype, gathered, then summed in float64."""
    lp = F.log_softmax(batch.logits.detach().cpu(), dim=-1)
    scored = lp[:, :-1].gather(-1, batch.ids.cpu()[:, 1:, None]).squeeze(-1).double()
    return (scored * (batch.mask.cpu()[:, 1:] != 0)).sum(-1)


def row_sums_text(batch: Batch, b: int, want: float) -> str:
    prompt, response = batch.rows[b]
    if not response:
        return "0, since nothing in it is counted"
    return (f"{fmt(want)}, the sum of log_softmax(logits[{b}, t - 1])[input_ids[{b}, t]] over t = "
            f"{prompt}..{prompt + response - 1}")


def raised(ctx, exc: BaseException) -> str:
    """'RuntimeError: its message (line 12: the line)' for an exception out of the solution."""
    try:
        text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails still has a type to name
        text = ""
    head = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    try:
        mine = Path(ctx.solution.__file__).resolve()
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == mine]
    except Exception:  # noqa: BLE001 - no file to point at: the message alone
        frames = []
    if frames and frames[-1].line:
        head += f" (line {frames[-1].lineno}: {frames[-1].line.strip()[:200]})"
    return head
