"""dpo_loss's side of the checks: the preference pairs, one call of the learner's dpo_loss (and its
backward), and the usual wrong losses and rewards, computed here in float64 to name the one a wrong
answer matches."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from quizapp.checking.harness import Tol, as_scalar, fail, is_close

PAIRS = 8
# (beta, label_smoothing); None calls dpo_loss without either, for the defaults (0.1, 0.0).
GRID = ((0.1, 0.0), (0.5, 0.2), (1.0, 0.45), (0.02, 0.1), None)
DEFAULTS = (0.1, 0.0)
DTYPES = (torch.float64, torch.float32)
TOLS = {torch.float64: Tol(rtol=1e-10), torch.float32: Tol(rtol=1e-5, atol=1e-6)}
# The contract's float64 bound for the gradients to the policy inputs; no entry of them is near 0
# (each is beta * weight / B, with weights in (0, 1)).
GRAD_TOL = Tol(rtol=1e-8, atol=1e-15)
NAMES = ("policy_chosen_logps", "policy_rejected_logps", "ref_chosen_logps", "ref_rejected_logps")
# Margins z of +-2e4 and some ordinary ones; whole numbers, so every difference is exact in float32 too.
BIG_MARGINS = (2e4, -2e4, 1.5e4, -5e3, 3.0, 0.0)
BIG_CASES = ((1.0, 0.0), (1.0, 0.2), (0.5, 0.45))


def make_logps(seed: int) -> tuple[torch.Tensor, ...]:
    """Four (PAIRS,) float64 tensors: summed log-probs of 20-50 nats, the policy a few nats off the
    reference, so that the margins z have both signs."""
    g = torch.Generator().manual_seed(seed)
    ref_chosen = -(20 + 30 * torch.rand(PAIRS, generator=g, dtype=torch.float64))
    ref_rejected = -(20 + 30 * torch.rand(PAIRS, generator=g, dtype=torch.float64))
    policy_chosen = ref_chosen + 4 * torch.randn(PAIRS, generator=g, dtype=torch.float64)
    policy_rejected = ref_rejected + 4 * torch.randn(PAIRS, generator=g, dtype=torch.float64)
    return policy_chosen, policy_rejected, ref_chosen, ref_rejected


def big_logps() -> tuple[torch.Tensor, ...]:
    """Pairs whose margins are BIG_MARGINS, every value a whole number."""
    z = torch.tensor(BIG_MARGINS, dtype=torch.float64)
    k = torch.arange(len(z), dtype=torch.float64)
    ref_chosen, ref_rejected = -40 - 3 * k, -60 + 2 * k
    policy_chosen = ref_chosen + 5 - k
    policy_rejected = policy_chosen - (ref_chosen - ref_rejected) - z
    return policy_chosen, policy_rejected, ref_chosen, ref_rejected


def case_text(case) -> str:
    if case is None:
        return "beta and label_smoothing left at their defaults"
    return f"beta={case[0]}, label_smoothing={case[1]}"


@dataclass
class PairRun:
    where: str
    logps: tuple  # the four inputs as the learner got them (after the cast to dtype), in float64 on the CPU
    case: tuple | None
    dtype: torch.dtype
    loss: object
    chosen_rewards: object
    rejected_rewards: object
    grads: tuple  # .grad of the four inputs after loss.backward() (None where none arrived)
    loss_requires_grad: bool
    required: tuple  # which of the four inputs required grad

    @property
    def beta_ls(self) -> tuple[float, float]:
        return DEFAULTS if self.case is None else self.case


def call(ctx, logps, case, dtype, device, *, where: str, refs_require_grad: bool = False) -> PairRun:
    """The learner's dpo_loss on copies (the policy's requiring grad), then loss.backward() when it can run."""
    required = (True, True, refs_require_grad, refs_require_grad)
    inputs = [t.to(device, dtype).clone().requires_grad_(r) for t, r in zip(logps, required)]
    seen = tuple(t.detach().double().cpu() for t in inputs)  # read before the call: it may write into them
    kwargs = {} if case is None else {"beta": case[0], "label_smoothing": case[1]}
    with ctx.given(where):
        out = ctx.solution.dpo_loss(*inputs, **kwargs)
        loss, chosen, rejected = unpack(out, where)
        backward = isinstance(loss, torch.Tensor) and loss.requires_grad and loss.numel() == 1
        if backward:
            loss.sum().backward()
    return PairRun(where, seen, case, dtype, loss, chosen, rejected,
                   tuple(t.grad for t in inputs), backward, required)


def unpack(out, where: str):
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        got = (f"a {type(out).__name__} of length {len(out)}" if isinstance(out, (tuple, list))
               else f"a {type(out).__name__}")
        fail(f"{where}: dpo_loss returned {got}; expected a tuple (loss, chosen_rewards, rejected_rewards)")
    return out


def expected(ctx, run, *, grads: bool = False):
    """The reference's (loss, chosen_rewards, rejected_rewards) on the values the learner got, in float64;
    with `grads`, the gradients to the two policy inputs instead."""
    beta, ls = run.beta_ls
    inputs = [t.clone().requires_grad_(grads) for t in run.logps]
    loss, chosen, rejected = ctx.reference.dpo_loss(*inputs, beta=beta, label_smoothing=ls)
    if grads:
        loss.backward()
        return inputs[0].grad, inputs[1].grad
    return float(loss), chosen, rejected


def loss_of(run) -> float:
    return as_scalar(run.loss, run.where, "a scalar loss (the mean over the pairs)")


# -- the right and the wrong values ----------------------------------------------------------------

def margin(logps) -> torch.Tensor:
    policy_chosen, policy_rejected, ref_chosen, ref_rejected = logps
    return (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)


def per_pair(z: torch.Tensor, beta: float, ls: float) -> torch.Tensor:
    return -(1 - ls) * F.logsigmoid(beta * z) - ls * F.logsigmoid(-beta * z)


def loss_variants(logps, beta: float, ls: float) -> list[tuple[str, float]]:
    """(what the loss then is, its value) for the usual mistakes that differ from the right loss here."""
    z = margin(logps)
    policy_chosen, policy_rejected, _, _ = logps
    up, down = F.logsigmoid(beta * z), F.logsigmoid(-beta * z)
    out = [
        ("the loss of -z" + (" (the same as swapping the weights 1 - ls and ls)" if ls else "") + ": the margin "
         "has the wrong sign, as when the policy's and the reference's log-ratios are swapped, (ref_chosen - "
         "ref_rejected) - (policy_chosen - policy_rejected), or chosen and rejected are; the margin is "
         "z = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)", per_pair(-z, beta, ls).mean()),
        ("the loss without the reference: z = policy_chosen - policy_rejected; subtract the reference's "
         "log-ratio, (ref_chosen - ref_rejected), too", per_pair(policy_chosen - policy_rejected, beta, ls).mean()),
        ("the sum over the pairs: return the mean", per_pair(z, beta, ls).sum()),
    ]
    if beta != 1:
        out.append(("the loss with beta = 1: beta multiplies the margin inside the logsigmoid",
                    per_pair(z, 1.0, ls).mean()))
    if ls:
        out += [
            ("TRL 0.29's robust loss, (-(1 - ls)·logsigmoid(βz) + ls·logsigmoid(-βz)) / (1 - 2·ls): a different "
             "formula. cDPO's (TRL 0.12-0.28's sigmoid loss) is -(1 - ls)·logsigmoid(βz) - ls·logsigmoid(-βz)",
             ((-(1 - ls) * up + ls * down) / (1 - 2 * ls)).mean()),
            ("-(1 - ls)·logsigmoid(βz) + ls·logsigmoid(-βz): the label-smoothing term has the wrong sign. A label "
             "flipped with probability ls adds ls times the loss of the opposite preference, "
             "-ls·logsigmoid(-βz)", (-(1 - ls) * up + ls * down).mean()),
            ("the loss without label smoothing: -logsigmoid(βz)", (-up).mean()),
        ]
    return [(what, float(value)) for what, value in out]


def diagnose_loss(seen: float, logps, beta: float, ls: float, tol: Tol) -> str:
    right = float(per_pair(margin(logps), beta, ls).mean())
    for what, value in loss_variants(logps, beta, ls):
        if not is_close(value, right, tol) and is_close(seen, value, tol):
            return f"; your loss equals {what}"
    return ""


def reward_variants(logps, beta: float, which: int) -> list[tuple[str, torch.Tensor]]:
    policy_chosen, policy_rejected, ref_chosen, ref_rejected = logps
    mine, other = ((policy_chosen, ref_chosen), (policy_rejected, ref_rejected))[::1 if which == 0 else -1]
    out = [
        ("the other response's reward: chosen and rejected are swapped", beta * (other[0] - other[1])),
        ("β·(ref - policy): the sign is flipped; the implicit reward is β·(policy - ref)", beta * (mine[1] - mine[0])),
        ("β·policy alone: the implicit reward is the log-ratio to the reference, β·(policy - ref)", beta * mine[0]),
    ]
    if beta != 1:
        out.append(("policy - ref without β: the implicit reward is β·(policy - ref)", mine[0] - mine[1]))
    return out
