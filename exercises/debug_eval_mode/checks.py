"""Checks for debug_eval_mode: train and validate the learner's script and the fixed one on the same
classifier and data (built from the fixed script's own definitions), watching every forward pass:
which batches ran, whether dropout and BatchNorm were in train mode, and whether BatchNorm's running
statistics moved. Then the drill's three questions (see quizapp.checking.drill)."""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, fail, listed

LR, MOMENTUM = 0.05, 0.9
MODEL_SEED, DATA_SEED = 31, 32  # not the script's: the fix must hold on other draws too
# eval()/train(), train(False)/train(True), remembering and restoring the mode, and model.train()
# at the top of every epoch give the same numbers bit for bit: over 6 seeds the largest difference
# is 0 (losses and weights). The near misses are far off: training on in eval mode after the first
# validation ends 0.33 (validation losses) and 1.2 (weights) away, BatchNorm in eval mode with
# dropout still on 0.37 and 1.1. The tolerance leaves room for another device's rounding only.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of four exact rewrites: bit-identical; the nearest miss: 0.33")

CHECKS = Checks(Required("train_and_validate", "(model, train_batches, val_batches, optimizer) -> list[float]",
                         sample_args=(None, None, None, None)))

LAYERS = (torch.nn.Dropout, torch.nn.modules.batchnorm._BatchNorm)


def watch(model, ref, extra):
    """Hooks that record, for every forward pass of the model, which kind of batch it was (training
    batches have TRAIN_BATCH rows, any other size is validation), which dropout and BatchNorm layers
    ran in train mode, the smallest dropout rate, and how far BatchNorm's running statistics moved."""
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, LAYERS)]
    norms = [m for _, m in layers if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    extra.update(train=[], val=[])
    saved = {}

    def before(module, inputs):
        saved["stats"] = [(m.running_mean.clone(), m.running_var.clone()) for m in norms]

    def after(module, inputs, output):
        moved = max((max((m.running_mean - a).abs().max().item(), (m.running_var - b).abs().max().item())
                     for m, (a, b) in zip(norms, saved["stats"])), default=0.0)
        n = int(inputs[0].shape[0])
        kind = "train" if n == ref.TRAIN_BATCH else "val"  # every training batch has TRAIN_BATCH rows
        extra[kind].append({
            "train_mode": [f"{name} ({type(m).__name__})" for name, m in layers if m.training],
            "dropout_p": min((m.p for _, m in layers if isinstance(m, torch.nn.Dropout)), default=None),
            "moved": moved,
        })

    return [model.register_forward_pre_hook(before), model.register_forward_hook(after)]


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Classifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    train_batches, val_batches = ref.make_data(DATA_SEED, ctx.device)
    extra: dict = {}
    handles = watch(model, ref, extra)
    try:
        return drill.run(ctx, label, lambda: module.train_and_validate(model, train_batches, val_batches, optimizer),
                         model, optimizer, extra=extra)
    finally:
        for h in handles:
            h.remove()


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train_and_validate()", "the fixed train_and_validate()")


def losses(values) -> str:
    return ", ".join(f"{v:.4f}" for v in values) if values else "none"


def symptom(ctx, yours, fixed):
    val = yours.extra["val"]
    if not val:
        fail(f"no validation forward pass ran where the fixed script "
             f"runs {len(fixed.extra['val'])}: validation must run, in eval mode")
    in_train = [f for f in val if f["train_mode"]]
    moved = max((f["moved"] for f in val), default=0.0)
    if not in_train and moved == 0.0:
        return
    layers = sorted({name for f in in_train for name in f["train_mode"]})
    said = []
    if in_train:
        what = []
        if any("Dropout" in name for name in layers):
            what.append("dropout draws a fresh random mask on every pass")
        if any("BatchNorm" in name for name in layers):
            what.append("BatchNorm normalises with each validation batch's own statistics")
        said.append(f"{len(in_train)} of {len(val)} validation forward passes ran with "
                    f"{listed(layers)} in train mode: " + " and ".join(what))
    if moved:
        said.append(f"BatchNorm's running statistics moved by up to {moved:.4f} during validation passes: "
                    "validating changed the model, with statistics of the validation data")
    said.append(f"validation loss per epoch: yours {losses(yours.losses)}; the fixed run's {losses(fixed.losses)}")
    fail("the symptom is still there: " + "; ".join(said))


def keeps_dropout() -> drill.Keep:
    """Training passes keep the model's dropout rate: switching dropout off (p = 0) hides the noisy
    validation and trains a different model."""

    def problem(yours, fixed):
        want = [f["dropout_p"] for f in fixed.extra["train"]]
        off = [f for f in yours.extra["train"] if want and f["dropout_p"] is not None and f["dropout_p"] < min(want)]
        if off:
            return (f"dropout's rate was {off[0]['dropout_p']:g} in {len(off)} training forward passes where the "
                    f"fixed script trains with {min(want):g}: turning dropout down hides the noisy validation, "
                    "it does not fix it")
        return None

    return drill.Keep("dropout", problem)


def advice(yours, fixed):
    """Training passes that ran in eval mode: model.eval() without model.train() after it."""
    train = yours.extra["train"]
    wrong = [i for i, f in enumerate(train) if len(f["train_mode"]) < len(fixed.extra["train"][0]["train_mode"])]
    if wrong:
        return (f"{len(wrong)} of {len(train)} training forward passes (the first at pass {wrong[0]}) ran with "
                "dropout or BatchNorm in eval mode: after validating, call model.train() again, or every later "
                "epoch trains without dropout and with frozen BatchNorm statistics")
    return None


drill.register(CHECKS, runs=runs, symptom_id="validates-in-eval-mode", unit="epoch",
               symptom_title="Validation runs in eval mode: no dropout, BatchNorm's running statistics used and left alone",
               symptom=symptom, tolerance=TOLERANCE, keep=[keeps_dropout()], advice=advice)
