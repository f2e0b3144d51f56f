"""Checks for debug_total_loss_graph: train the learner's script and the fixed one on the same MLP,
training batches and held-out batch (built from the fixed script's own definitions, so an edited
model or data cannot change the test). While they run, two things are tracked, and at every optimizer
step the grader counts what is still alive:

- the graphs themselves: every forward pass's first layer adds a zero times a fresh leaf to its output,
  so that pass's graph holds that leaf (its AccumulateGrad node) for as long as the graph lives; a weak
  reference to the leaf says whether the graph does. Only the graph's lifetime counts here, so no
  saved-tensor hook of the learner's (save_on_cpu, checkpointing, identity hooks) can hide it;
- the bytes: every tensor autograd saves (torch.autograd.graph.saved_tensors_hooks, a weak reference
  to what each save packs). Only the innermost pair of such hooks runs, so the learner's own hide these;
  the message then says so instead of naming a size.

Then it asks the drill's three questions (see quizapp.checking.drill).

drill.py has no memory measure; the tracker below is this drill's own."""

from __future__ import annotations

import weakref

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, fail, plural

LR, MOMENTUM = 0.05, 0.9
MODEL_SEED, DATA_SEED = 41, 42  # not the script's: the fix must hold on other draws too
MAX_PASSES_HELD = 1  # an earlier forward's graph still referenced by a local variable is not a leak
# torch.no_grad() + .item(), .item() alone (a graph is built and dropped at once) and a detached
# tensor total give identical runs over 6 seeds x 40 steps: scoring the held-out batch in eval mode
# changes neither the weights nor the random numbers. The near miss that leaves dropout off after
# scoring ends 0.17 (losses) / 0.25 (weights) away, relative to the largest value.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of three exact rewrites: identical runs; a near miss 0.17 off")

CHECKS = Checks(Required("train", "(model, batches, optimizer, val_batch, log=None) -> list[float]",
                         sample_args=(None, None, None, None)))


class _Saved:
    """What a save packs: the tensor, detached so that holding it makes no cycle through its grad_fn,
    and the forward pass it was saved in."""

    __slots__ = ("tensor", "forward", "__weakref__")

    def __init__(self, tensor, forward):
        self.tensor = tensor.detach()
        self.forward = forward


class SavedTracker:
    """Every tensor autograd saves while it is active, weakly referenced: a save stays alive as long
    as the graph that made it does."""

    def __init__(self, model):
        self.params = {p.untyped_storage().data_ptr() for p in model.parameters()}
        self.forwards = 0
        self.saved: list = []
        self.graphs: list = []  # (weak reference to a forward pass's leaf, that pass's number)
        # The step being taken is for this pass: its graph's nodes live on after backward (while `loss`
        # refers to them) without being a leak.
        self.training_forward = 0
        self.hooks = torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)
        first = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
        # On a layer, not on the model: a forward called as model.forward(x) still runs its layers.
        self.handles = [first.register_forward_pre_hook(self.on_forward), first.register_forward_hook(self.mark)]

    def on_forward(self, module, inputs):
        self.forwards += 1
        if module.training:
            self.training_forward = self.forwards

    def mark(self, module, inputs, output):
        """Tie a fresh leaf to this pass's graph: the graph holds it while the graph lives. Adding zero
        leaves every value as it was (both runs are marked alike)."""
        if not (torch.is_grad_enabled() and output.requires_grad):
            return None  # no graph is built: nothing can be kept
        leaf = torch.zeros((), dtype=output.dtype, device=output.device, requires_grad=True)
        self.graphs.append((weakref.ref(leaf), self.forwards))
        return output + leaf * 0

    def pack(self, tensor):
        saved = _Saved(tensor, self.forwards)
        self.saved.append(weakref.ref(saved))
        return saved

    @staticmethod
    def unpack(saved):
        return saved.tensor

    def held(self) -> tuple[int, int, set]:
        """(distinct activation tensors, their bytes, the forward passes whose graphs are alive)."""
        self.graphs = [(ref, number) for ref, number in self.graphs if ref() is not None]
        storages, passes = {}, {number for _, number in self.graphs if number != self.training_forward}
        alive = []
        for ref in self.saved:
            saved = ref()
            if saved is None:
                continue
            alive.append(ref)
            storage = saved.tensor.untyped_storage()
            if storage.data_ptr() not in self.params:
                storages[storage.data_ptr()] = storage.nbytes()
                passes.add(saved.forward)
        self.saved = alive
        return len(storages), sum(storages.values()), passes


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Classifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    val = ref.make_val_batch(DATA_SEED, ctx.device)
    tracker = SavedTracker(model)
    extra: dict = {"held": []}
    real_step = optimizer.step

    def step(*args, **kwargs):
        tensors, nbytes, passes = tracker.held()
        extra["held"].append((tensors, nbytes, len(passes)))
        return real_step(*args, **kwargs)

    optimizer.step = step
    try:
        with tracker.hooks:
            return drill.run(ctx, label, lambda: module.train(model, data, optimizer, val), model, optimizer,
                             extra=extra)
    finally:
        for handle in tracker.handles:
            handle.remove()


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:.2f} MiB"


def symptom(ctx, yours, fixed):
    held = yours.extra["held"]
    worst = max(range(len(held)), key=lambda i: (held[i][2], held[i][1]), default=None)
    if worst is None or held[worst][2] <= MAX_PASSES_HELD:
        return
    tensors, nbytes, passes = held[worst]
    last = len(held) - 1
    growth = (held[last][1] - held[0][1]) / last if last > 0 else 0.0
    fixed_max = max((h[1] for h in fixed.extra["held"]), default=0)
    if nbytes:
        fail(f"the symptom is still there: memory grows every step. When step {worst} began, autograd still held the "
             f"saved activations of {passes} earlier forward passes: {tensors} tensors, {mib(nbytes)}, kept for "
             f"backward passes that never run (step 0: {held[0][2]} passes, {mib(held[0][1])}; about "
             f"{mib(int(growth))} more each step). The fixed script holds at most {mib(fixed_max)} when a step begins")
    fail(f"the symptom is still there: memory grows every step. When step {worst} began, autograd still held the "
         f"graphs of {passes} earlier forward passes, kept for backward passes that never run (step 0: "
         f"{held[0][2]}). Their size is out of the grader's sight: saved-tensor hooks of your own (save_on_cpu, "
         f"checkpointing, or a pair of your own) move or hide what a graph saves, but the graph, and what it "
         f"holds, lives on as long as something refers to it")


def held_out_size(fixed) -> int:
    """The held-out batch's size: what the fixed script's eval-mode forward passes see."""
    return next((f["n"] for f in fixed.forwards if not f["training"]), -1)


def keeps_validation() -> drill.Keep:
    """The held-out batch is still scored after every step."""

    def problem(yours, fixed):
        n = held_out_size(fixed)
        mine = sum(1 for f in yours.forwards if f["n"] == n)
        theirs = sum(1 for f in fixed.forwards if f["n"] == n)
        if mine < theirs:
            return (f"the held-out batch was scored {plural(mine, 'time')} where the fixed script scores it {theirs} times "
                    "(after every step): dropping the held-out loss hides the growth instead of fixing it")
        return None

    return drill.Keep("held-out loss every step", problem)


def advice(yours, fixed):
    """Two near misses: backward through the held-out loss (frees its graph, but adds its gradient
    to the next step's), and dropout left off after scoring (model.train() not restored)."""
    back_yours, back_fixed = len(yours.of("backward")), len(fixed.of("backward"))
    if back_yours > back_fixed:
        return (f"backward ran {back_yours} times where the fixed script runs it {back_fixed} times: a backward "
                "through the held-out loss frees its graph, but it also adds the held-out gradient into .grad, "
                "and the next step trains on it")
    n = held_out_size(fixed)
    eval_train = [f for f in yours.forwards if f["n"] != n and not f["training"]]
    if eval_train:
        return (f"{len(eval_train)} of the training forward passes ran in eval mode (no dropout): after scoring the "
                "held-out batch, model.train() must switch dropout back on")
    return None


def same_memory(ctx, yours, fixed):
    """The bug leaves the weights alone, so the fixed run is matched only when its memory is too."""
    held = yours.extra["held"]
    worst = max(held, key=lambda h: (h[2], h[1]), default=(0, 0, 0))
    if worst[2] > MAX_PASSES_HELD:
        fixed_max = max((h[1] for h in fixed.extra["held"]), default=0)
        size = f"up to {mib(worst[1])} of saved activations" if worst[1] else "the graphs"
        fail(f"the losses and weights match the fixed script's, but its memory does not: when a step began, autograd "
             f"held {size} from {worst[2]} earlier forward passes, where the fixed script holds at most "
             f"{mib(fixed_max)}")


drill.register(CHECKS, runs=runs, symptom_id="memory-stays-flat",
               symptom_title="Autograd holds no more saved activations at step 40 than at step 1",
               symptom=symptom, tolerance=TOLERANCE, keep=[keeps_validation()], compare=same_memory, advice=advice)
