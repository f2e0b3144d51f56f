"""Checks for debug_no_shuffle: train the learner's script and the fixed one on the same classifier,
class-sorted data and seeded shuffling generator (built from the fixed script's own definitions, so
an edited model or data cannot change the test), recording which training samples every batch
held, then ask the drill's three questions (see quizapp.checking.drill)."""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, fail

LR, MOMENTUM = 0.1, 0.9
MODEL_SEED, DATA_SEED, SHUFFLE_SEED = 41, 42, 43  # not the script's: the fix must hold on other draws too
SINGLE_CLASS_LIMIT = 0.25  # a shuffled batch of 8 from 4 balanced classes is single-class with chance about 4 * 4**-8
# The rule: the order is the one DataLoader(dataset, batch_size=8, shuffle=True, generator=g) draws.
# torch.randperm(n, generator=g) once per epoch draws another order from the same generator, measured
# on torch 2.13: the DataLoader iterator first takes a 64-bit seed from g, and its RandomSampler
# draws one spare permutation after each epoch (for the remainder of num_samples // n), so they
# already differ at the first batch. The advice below names it.
# Exact rewrites (the loader built every epoch, an explicit RandomSampler or BatchSampler with the
# same generator) replay the fixed run bit for bit: over 6 seeds x 48 steps the largest difference
# is 0, losses and weights. The near misses end far off, relative to the largest loss / weight (the
# smallest over the 6 seeds): randperm per epoch 0.69 / 0.42, one shuffle reused every epoch
# 0.69 / 0.37, shuffle=True without the generator 0.61 / 0.45, sampling with replacement 0.62 / 0.46,
# classes interleaved by hand 0.49 / 0.52.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of three exact rewrites: identical runs; near misses 0.37 or more off")

CHECKS = Checks(Required("train", "(model, dataset, optimizer, generator) -> list[float]",
                         sample_args=(None, None, None, None)))


def watch_batches(model, inputs: torch.Tensor, extra: dict):
    """Record, for every forward of the model, the indices of the training samples its batch held
    (-1 for a row that is no training sample). Returns the hook handle."""
    extra["batches"] = []

    def hook(module, args):
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[1] != inputs.shape[1]:
            extra["batches"].append([])
            return
        with torch.no_grad():
            same = (x.detach().to(inputs.device, inputs.dtype)[:, None, :] == inputs[None, :, :]).all(dim=-1)
            found = same.any(dim=1)
            index = torch.where(found, same.float().argmax(dim=1), torch.full_like(found, -1, dtype=torch.long))
        extra["batches"].append(index.tolist())

    return model.register_forward_pre_hook(hook)


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Classifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    train_set, (val_x, val_y) = ref.make_data(DATA_SEED, ctx.device)
    generator = torch.Generator().manual_seed(SHUFFLE_SEED)
    extra: dict = {}
    handle = watch_batches(model, train_set.tensors[0], extra)
    try:
        trace = drill.run(ctx, label, lambda: module.train(model, train_set, optimizer, generator), model, optimizer,
                          extra=extra)
    finally:
        handle.remove()
    labels = train_set.tensors[1].tolist()
    extra["classes"] = [[labels[i] for i in batch if i >= 0] for batch in extra["batches"]]
    extra["accuracy"] = ref.accuracy_per_class(model, val_x, val_y)
    extra["n"] = len(labels)
    extra["epochs"] = ref.EPOCHS
    return trace


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def accuracy(values) -> str:
    per_class = ", ".join(f"class {c} {a:.0%}" for c, a in enumerate(values))
    return f"{per_class} (mean {sum(values) / max(len(values), 1):.0%})"


def blocks(classes) -> str:
    """The classes of a run of batches, grouped: 'class 0 x6, class 1 x6, ...' (mixed batches as 'mixed')."""
    names = [f"class {c[0]}" if c and len(set(c)) == 1 else "mixed" for c in classes]
    parts: list[list] = []
    for name in names:
        if parts and parts[-1][0] == name:
            parts[-1][1] += 1
        else:
            parts.append([name, 1])
    shown = ", ".join(f"{name} x{count}" for name, count in parts[:8])
    return shown + (f", ... ({len(parts)} runs in all)" if len(parts) > 8 else "")


def saw(losses, classes) -> str:
    """The loss at the class changes: a saw-tooth when it jumps up where a new class's batches begin."""
    changes = [i for i in range(1, min(len(losses), len(classes)))
               if classes[i] and classes[i - 1] and classes[i] != classes[i - 1]]
    jumps = [i for i in changes if losses[i] > 2 * losses[i - 1]]
    if changes and len(jumps) * 2 > len(changes):
        i = max(jumps, key=lambda j: losses[j] - losses[j - 1])
        return (f"The loss saws: it falls during each class's run of batches and jumps where the next class's "
                f"begin, at {len(jumps)} of the {len(changes)} class changes (step {i - 1}: {losses[i - 1]:.4g}, "
                f"step {i}: {losses[i]:.4g}); {drill.loss_log(losses, changes[0])}")
    return f"Your losses: {drill.loss_log(losses, changes[0] if changes else None)}"


def symptom(ctx, yours, fixed):
    classes = yours.extra["classes"]
    single = [i for i, c in enumerate(classes) if c and len(set(c)) == 1]
    per_epoch = max(len(fixed.extra["classes"]) // fixed.extra["epochs"], 1)
    if classes and len(single) > SINGLE_CLASS_LIMIT * len(classes):
        first = classes[:per_epoch]
        in_first = sum(1 for c in first if c and len(set(c)) == 1)
        fail(f"the symptom is still there: {len(single)} of your {len(classes)} batches held a single class "
             f"({in_first} of the {len(first)} batches of epoch 0: {blocks(first)}), where the fixed script's "
             f"batches mix the classes. {saw(yours.losses, classes)}. After training, validation accuracy per class "
             f"is {accuracy(yours.extra['accuracy'])}, against {accuracy(fixed.extra['accuracy'])} for the fixed "
             "script")


def keeps_batches() -> drill.Keep:
    """Every batch holds as many samples as the fixed script's."""

    def problem(yours, fixed):
        sizes, wanted = [f["n"] for f in yours.forwards], [f["n"] for f in fixed.forwards]
        for i, (a, b) in enumerate(zip(sizes, wanted)):
            if a != b:
                return (f"batch {i} held {a} samples where the fixed script's hold {b}: a bigger batch mixes the "
                        "classes within it, but the classes still come in blocks and it is a different training")
        if len(sizes) > len(wanted):
            return (f"the model ran {len(sizes)} forward passes where the fixed script runs {len(wanted)}: the "
                    "batches or epochs were changed")
        return None

    return drill.Keep("batch size", problem)


def epochs(trace, per_epoch):
    batches = trace.extra["batches"]
    return [sum(batches[i:i + per_epoch], []) for i in range(0, len(batches), per_epoch)]


def randperm_order(n, count):
    g = torch.Generator().manual_seed(SHUFFLE_SEED)
    return [torch.randperm(n, generator=g).tolist() for _ in range(count)]


def advice(yours, fixed):
    """Name the shuffles that mix the batches but not the way the fixed script does."""
    per_epoch = max(len(fixed.extra["batches"]) // fixed.extra["epochs"], 1)
    mine, wanted, n = epochs(yours, per_epoch), epochs(fixed, per_epoch), yours.extra["n"]
    classes = yours.extra["classes"]
    single = sum(1 for c in classes if c and len(set(c)) == 1)
    if len(mine) != len(wanted) or mine == wanted or single > SINGLE_CLASS_LIMIT * len(classes):
        return None  # a different set-up, the same order, or the symptom itself: said elsewhere
    for e, order in enumerate(mine):
        if sorted(order) != list(range(n)):
            return (f"in epoch {e}, {n - len(set(order))} of the {n} training samples were never drawn, and as many "
                    "draws repeated a sample already drawn: sampling with replacement is not a shuffle; each epoch "
                    "must visit every sample once")
    if len(mine) > 1 and all(order == mine[0] for order in mine):
        return (f"all {len(mine)} epochs visited the samples in the same order: an order fixed once (shuffled once, "
                "or interleaved by hand) was reused; draw a new order every epoch, as a DataLoader with "
                "shuffle=True does")
    if mine == randperm_order(n, len(mine)):
        return ("your order is torch.randperm(n, generator=generator) once per epoch; the fixed script takes its "
                "order from DataLoader(dataset, batch_size=..., shuffle=True, generator=generator), which draws "
                "from the same generator in another way (a seed first, and a spare permutation after each epoch), "
                "so the same generator gives another order. Shuffle through the DataLoader, as the statement says")
    return (f"your batches visit the samples in another order than the fixed script's (epoch 0 starts with samples "
            f"{mine[0][:4]} where the fixed script's starts with {wanted[0][:4]}): the order must be drawn from "
            "the `generator` the grader passes, with DataLoader(..., shuffle=True, generator=generator); "
            "shuffle=True alone draws from torch's global random state")


drill.register(CHECKS, runs=runs, symptom_id="batches-mix-classes",
               symptom_title="The batches mix the classes: at most a quarter of the 48 batches hold a single class",
               symptom=symptom, tolerance=TOLERANCE, keep=[keeps_batches()], advice=advice)
