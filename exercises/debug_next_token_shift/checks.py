"""Checks for debug_next_token_shift: train the learner's script and the fixed one on the same tiny
causal language model and token data (built from the fixed script's own definitions), then ask the
drill's three questions (see quizapp.checking.drill). The symptom is measured on the trained model
itself, on held-out sequences, so a loss that merely looks plausible cannot pass."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, Tol, fail, is_close

LR = 0.01
MODEL_SEED, DATA_SEED = 21, 22  # not the script's: the fix must hold on other draws too
HELDOUT_BATCHES = 8
# The reference's slicing, torch.roll with the wrapped last position dropped, ignore_index=-100
# labels and the (batch, vocab, length) form of cross_entropy agree to float32 rounding: over 6
# seeds x 50 Adam steps the largest differences are 1.7e-7 (losses) and 1.1e-5 (weights, Adam
# turns rounding-sized gradient differences into whole steps on near-zero gradients), relative.
# The nearest miss is far away: torch.roll keeping the wrapped last position ends 0.09 (losses)
# and 0.31 (weights) away; the wrong-way shift and the double shift 0.25 and more.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-4,
                            why="6 seeds of four exact rewrites: within 1.1e-5; torch.roll's wrap-around: 0.09 and more")
# The trained model is judged on held-out sequences, with the next-token loss the grader computes:
# over 8 seeds the fixed runs land at 0.98 to 1.10 nats (the data's floor is 0.99, a finite
# held-out set can dip below it), torch.roll's wrap-around within 0.02 of them; a model trained to
# copy its input, to predict the previous token or the token after next lands at 3.1 and above.
HELDOUT_SLACK = 0.25  # nats above the fixed run's held-out loss that the symptom check allows

CHECKS = Checks(Required("train", "(model, batches, optimizer) -> list[float]", sample_args=(None, None, None)))


def next_token_report(model, ref, device) -> dict:
    """The trained model's next-token loss on held-out sequences, and how often its top guess at
    position t is token t + 1 (the right answer), token t itself (a copy) or token t - 1."""
    # The batches after the training ones, from the same seed: the same rule, sequences not trained on.
    batches = ref.make_batches(DATA_SEED, device, steps=ref.STEPS + HELDOUT_BATCHES)[ref.STEPS:]
    with torch.no_grad():
        tokens = torch.cat(batches)
        logits = model(tokens).float()
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, ref.VOCAB), tokens[:, 1:].reshape(-1)).item()
        guess = logits.argmax(-1)
        copies = (guess == tokens).float().mean().item()
        previous = (guess[:, 1:] == tokens[:, :-1]).float().mean().item()
        right = (guess[:, :-1] == tokens[:, 1:]).float().mean().item()
        after_next = (guess[:, :-2] == tokens[:, 2:]).float().mean().item()
    return {"heldout": loss, "copies": copies, "previous": previous, "right": right, "after_next": after_next}


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.TinyCausalLM().to(ctx.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    data = ref.make_batches(DATA_SEED, ctx.device)
    trace = drill.run(ctx, label, lambda: module.train(model, data, optimizer), model, optimizer)
    trace.extra.update(next_token_report(model, ref, ctx.device))
    return trace


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def symptom(ctx, yours, fixed):
    floor = ctx.reference.entropy_floor()
    mine, theirs = yours.extra, fixed.extra
    too_good = len(yours.losses) >= 5 and max(yours.losses[-5:]) < floor * 0.8
    if mine["heldout"] <= theirs["heldout"] + HELDOUT_SLACK and not too_good:
        return
    said = [f"on held-out sequences the trained model's next-token loss is {mine['heldout']:.3f} nats where the "
            f"fixed run's is {theirs['heldout']:.3f}; its top guess is the next token {mine['right']:.0%} of the "
            f"time (fixed run: {theirs['right']:.0%}), the very token it was given {mine['copies']:.0%} and the token "
            f"before that {mine['previous']:.0%}"]
    if too_good:
        said.insert(0, f"the training loss ends at {yours.losses[-1]:.4f}, below the {floor:.3f} nats that no "
                       f"model can beat on this data ({drill.loss_log(yours.losses)}): the loss measures "
                       "something easier than predicting the next token")
    fail("the symptom is still there: " + "; ".join(said))


# What the trained model guesses most, past this share of positions, names what its targets were.
LEARNED = 0.5


def advice(yours, fixed):
    """The step-0 loss is the same model on the same batch: a different value means different
    positions or targets are scored. What the trained model learned to guess says which."""
    # A NaN first loss names no position: that is the symptom check's to report.
    if not (yours.losses and fixed.losses and math.isfinite(yours.losses[0])
            and not is_close(yours.losses[0], fixed.losses[0], Tol(rtol=1e-4))):
        return None
    at_start = (f"at step 0, on the same model and batch, your loss is {yours.losses[0]:.4f} where the next-token "
                f"loss is {fixed.losses[0]:.4f}")
    learned = yours.extra
    if learned.get("previous", 0) > LEARNED:
        return (f"{at_start}, and the trained model guesses the token before the one it was given "
                f"{learned['previous']:.0%} of the time: the targets are shifted the wrong way (position t scored "
                "against token t - 1); score logits[:, :-1] against tokens[:, 1:]")
    if learned.get("after_next", 0) > LEARNED:
        return (f"{at_start}, and the trained model guesses the token after next {learned['after_next']:.0%} of the "
                "time: the targets are shifted twice (the labels were shifted, and then shifted again where the "
                "loss is taken); shift once")
    if learned.get("copies", 0) > LEARNED:
        return (f"{at_start}, and the trained model guesses the very token it was given {learned['copies']:.0%} of "
                "the time: the targets are not shifted at all; score logits[:, :-1] against tokens[:, 1:]")
    if is_close(yours.losses[0], fixed.losses[0], Tol(rtol=0.01)):
        return (f"{at_start}, close but not equal: one position too many is scored; torch.roll wraps the first "
                "token round to the last position, which has no next token: drop that position")
    return (f"{at_start}: score the logits of positions 0 to length-2 against tokens 1 to length-1, each position "
            "once")


drill.register(CHECKS, runs=runs, symptom_id="predicts-next-token",
               symptom_title="The trained model predicts the next token, not the one it was given",
               symptom=symptom, tolerance=TOLERANCE, advice=advice)
