"""Behavioural checks for lora: build LoRALinear layers and small nested models with the
learner's code, set lora_A/lora_B to known values where needed, and compare with the formulas."""

from __future__ import annotations

import torch
from torch import nn

from quizapp.checking.harness import (
    EXACT,
    Checks,
    Required,
    Tol,
    close_elements,
    fail,
    fmt,
    is_close,
    largest_error,
    listed,
    mismatch,
    nothing_to_check,
    plain,
)

IN, OUT, RANK, ALPHA = 10, 6, 4, 16.0  # scaling = 4.0, so a forgotten "/ rank" shows clearly
# float32: the reference formula and a solution may multiply in another order ((x A^T) B^T vs
# x (B A)^T): measured differences are about 1e-7 of the output's size; merged vs unmerged about
# 4e-6 absolute in PEFT. 1e-5 relative covers both, while any real bug (scaling off by 4x, a
# transposed or missing factor, dropout on the wrong path) is off by more than 1e-1. Of the largest
# entry: an output that happens to sit near zero holds no more digits than its neighbours.
TOL = Tol(rtol=1e-5, of_largest=True)
TARGETS = ["q_proj", "v_proj"]

CHECKS = Checks(
    Required("LoRALinear", "(self, base: nn.Linear, rank: int, alpha: float, dropout: float = 0.0)",
             sample_args=(None, 4, 8.0), sample_kwargs={"dropout": 0.0}, is_class=True),
    Required("add_lora", "(model, rank, alpha, target_modules, dropout=0.0) -> nn.Module",
             sample_args=(None, 4, 8.0, ["q_proj"]), sample_kwargs={"dropout": 0.0}),
)


def make_layer(ctx, *, rank=RANK, alpha=ALPHA, dropout=0.0, bias=True, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    base = nn.Linear(IN, OUT, bias=bias).to(device=ctx.device, dtype=dtype)
    return base, ctx.solution.LoRALinear(base, rank, alpha, dropout)


def set_ab(layer, seed=1):
    """Give lora_A and lora_B known non-zero values (through .data, as an optimizer would)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        layer.lora_A.copy_(torch.randn(layer.lora_A.shape, generator=g) * 0.5)
        layer.lora_B.copy_(torch.randn(layer.lora_B.shape, generator=g) * 0.5)
    return layer.lora_A.detach().clone(), layer.lora_B.detach().clone()


def inputs(ctx, n=8, dtype=torch.float32, seed=2):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, IN, generator=g).to(device=ctx.device, dtype=dtype)  # an extra dim, like tokens


def expect_shape(what, tensor, shape):
    if not isinstance(tensor, torch.Tensor):
        fail(f"{what} should be an nn.Parameter of shape {shape}, got {type(tensor).__name__}")
    if tuple(tensor.shape) != shape:
        fail(f"{what} has shape {tuple(tensor.shape)}, expected {shape}")


# -- LoRALinear -------------------------------------------------------------------------------

@CHECKS.add("lora-shapes", "lora_A (rank, in) and lora_B (out, rank) are trainable; the base is frozen")
def lora_shapes(ctx):
    base, layer = make_layer(ctx)
    if getattr(layer, "base", None) is not base:
        fail("LoRALinear(base, ...).base should be the nn.Linear that was passed in")
    expect_shape(f"lora_A (rank={RANK}, in_features={IN})", getattr(layer, "lora_A", None), (RANK, IN))
    expect_shape(f"lora_B (out_features={OUT}, rank={RANK})", getattr(layer, "lora_B", None), (OUT, RANK))
    for name in ("lora_A", "lora_B"):
        p = getattr(layer, name)
        if not isinstance(p, nn.Parameter) or not p.requires_grad:
            fail(f"{name} must be a trainable nn.Parameter (requires_grad=True); got {type(p).__name__} "
                 f"with requires_grad={p.requires_grad}")
    frozen = [n for n, p in base.named_parameters() if p.requires_grad]
    if frozen:
        which = " and ".join(frozen)
        fail(f"the base layer's {which} still require{'s' if len(frozen) == 1 else ''} gradients; freeze "
             f"{'it' if len(frozen) == 1 else 'them'} (requires_grad_(False)): LoRA trains only lora_A and lora_B")
    own = {n for n, p in layer.named_parameters() if p.requires_grad}
    if own != {"lora_A", "lora_B"}:
        fail(f"trainable parameters of a LoRALinear should be exactly lora_A and lora_B, got {sorted(own)}")


@CHECKS.add("lora-init", "At init lora_B is zero, lora_A is not, and the output equals the base's")
def lora_init(ctx):
    base, layer = make_layer(ctx)
    a, b = layer.lora_A.detach(), layer.lora_B.detach()
    if bool(b.any()):
        fail(f"lora_B should start at zeros (so the wrapped layer starts out as the base), but its largest "
             f"|value| is {b.abs().max().item():.3g}")
    if not bool(a.any()) or a.float().std().item() == 0:
        fail(f"lora_A should start random and non-zero (e.g. kaiming_uniform_ with a=sqrt(5)); it is "
             f"{'all zeros' if not bool(a.any()) else 'constant ' + fmt(a.flatten()[0].item())}: with A and B "
             f"both zero, neither gets a gradient and LoRA never learns")
    x = inputs(ctx)
    with torch.no_grad():
        want, seen = base(x), plain(layer(x))
    problem = mismatch(seen, want, TOL, what="outputs", against="base(x)")
    if problem:
        fail(f"at init the output should equal base(x): {problem}")


@CHECKS.add("lora-scaling", "scaling is alpha / rank")
def lora_scaling(ctx):
    for rank, alpha in ((RANK, ALPHA), (8, 8.0), (2, 1.0)):
        _, layer = make_layer(ctx, rank=rank, alpha=alpha)
        seen = getattr(layer, "scaling", None)
        if not isinstance(seen, (int, float)) or not is_close(float(seen), alpha / rank, Tol(atol=1e-12)):
            fail(f"rank={rank}, alpha={fmt(alpha)}: scaling should be alpha / rank = {fmt(alpha / rank)}, got {seen!r}")


@CHECKS.add("lora-forward", "forward = base(x) + (alpha / rank) * x @ lora_A.T @ lora_B.T")
def lora_forward(ctx):
    for bias in (True, False):
        base, layer = make_layer(ctx, bias=bias)
        a, b = set_ab(layer)
        x = inputs(ctx)
        with torch.no_grad():
            want = base(x) + (ALPHA / RANK) * (x @ a.T @ b.T)
            seen = plain(layer(x))
        if tuple(seen.shape) != tuple(want.shape):
            fail(f"output shape {tuple(seen.shape)} for input {tuple(x.shape)}, expected {tuple(want.shape)}")
        problem = mismatch(seen, want, TOL, what="outputs", against="the formula")
        if problem:
            with torch.no_grad():
                unscaled = is_close(seen, base(x) + x @ a.T @ b.T, TOL)
            extra = " (it matches the formula without the alpha / rank scaling)" if unscaled else ""
            fail(f"bias={bias}, rank={RANK}, alpha={fmt(ALPHA)}, non-zero A and B: the output should be base(x) + "
                 f"{fmt(ALPHA / RANK)} * x @ A.T @ B.T: {problem}{extra}")


@CHECKS.add("lora-dropout", "Dropout acts on the LoRA branch's input only")
def lora_dropout(ctx):
    p = 0.5
    torch.manual_seed(0)
    base = nn.Linear(IN, IN).to(ctx.device)
    layer = ctx.solution.LoRALinear(base, IN, float(IN), p)  # rank = in = out
    scale = float(layer.scaling)  # checked elsewhere; this check is about dropout only
    x = inputs(ctx)
    layer.train()
    with torch.no_grad():
        layer.lora_B.zero_()
        seen = plain(layer(x))  # B is zero: any change from base(x) comes from dropping inputs of the base
    problem = mismatch(seen, base(x), TOL, what="outputs", against="base(x)")
    if problem:
        fail(f"dropout={p}, train mode, lora_B still zero: the output should equal base(x), but {problem}: "
             "dropout must act on the LoRA branch's input only, not on the base path")
    with torch.no_grad():
        layer.lora_A.copy_(torch.eye(IN))
        layer.lora_B.copy_(torch.eye(IN))
        delta = (plain(layer(x)) - base(x)) / scale  # = dropout(x): each entry 0 or x / (1 - p)
    near = Tol(atol=1e-5 * float(x.abs().max()))  # the float32 rounding of x's largest entry, and then some
    kept = close_elements(delta, x / (1 - p), near)
    dropped = close_elements(delta, 0.0, near)
    if not bool((kept | dropped).all()):
        i = (~(kept | dropped)).nonzero()[0].tolist()
        fail(f"dropout={p}, train mode, A = B = identity: each entry of (output - base(x)) / scaling should be 0 "
             f"or x / (1 - p); at {i} x = {x[tuple(i)].item():.4g} and it is {delta[tuple(i)].item():.4g}")
    frac = dropped.float().mean().item()
    if frac == 1.0:
        layer.eval()
        with torch.no_grad():
            idle = is_close(plain(layer(x)), base(x), near)
        if idle:  # a branch that never reaches the output drops nothing: there is no dropout to judge
            nothing_to_check("with A = B = identity the output is base(x) in train and in eval mode: the LoRA branch "
                             "never reached the output")
    if not 0.3 <= frac <= 0.7:
        fail(f"dropout={p}, train mode: {frac:.0%} of the LoRA branch's inputs were dropped, expected about {p:.0%}")
    layer.eval()
    with torch.no_grad():
        problem = mismatch((plain(layer(x)) - base(x)) / scale, x, TOL, what="values", against="x")
    if problem:
        fail(f"dropout={p}, eval mode: dropout must be off (use nn.Dropout, which follows train()/eval()), but "
             f"(output - base(x)) / scaling should equal x: {problem}")


@CHECKS.add("lora-merge", "merge() returns an equivalent new nn.Linear and leaves the module unchanged")
def lora_merge(ctx):
    for bias in (True, False):
        base, layer = make_layer(ctx, bias=bias)
        a, b = set_ab(layer)
        w0 = base.weight.detach().clone()
        b0 = None if base.bias is None else base.bias.detach().clone()
        x = inputs(ctx)
        layer.eval()
        with torch.no_grad():
            before = plain(layer(x))
            merged = layer.merge()
        tensors = [("base.weight", base.weight, w0), ("lora_A", layer.lora_A, a), ("lora_B", layer.lora_B, b)]
        if b0 is not None:
            tensors.append(("base.bias", base.bias, b0))
        changed = [f"{n} (moved by up to {(now.detach().float() - was.float()).abs().max().item():.3g})"
                   for n, now, was in tensors if not torch.equal(now.detach(), was)]
        if changed:
            fail(f"bias={bias}: merge() changed the LoRALinear: {', '.join(changed)}; it must leave self unchanged "
                 "and return a new nn.Linear")
        if type(merged) is not nn.Linear:
            fail(f"merge() should return a plain nn.Linear, got {type(merged).__name__}")
        if merged is base or merged.weight is base.weight:
            fail("merge() returned the base layer (or shares its weight tensor); build a new nn.Linear so the "
                 "LoRALinear stays as it was")
        with torch.no_grad():
            problem = mismatch(plain(merged(x)), before, TOL, what="outputs", against="the LoRALinear")
            expected_w = w0 + (ALPHA / RANK) * (b @ a)
        if problem:
            werr = largest_error(merged.weight, expected_w)
            fail(f"bias={bias}: the merged layer's output should equal the LoRALinear's: {problem}; its weight "
                 f"differs from W + {fmt(ALPHA / RANK)} * B @ A by {werr:.3g} of its largest entry")
        if (merged.bias is None) != (b0 is None) or (b0 is not None and not is_close(merged.bias, b0, EXACT)):
            fail(f"bias={bias}: the merged layer should keep the base's bias unchanged")
        with torch.no_grad():
            problem = mismatch(plain(layer(x)), before, EXACT, what="outputs", against="its output before merge()")
        if problem:
            fail(f"bias={bias}: after merge() the LoRALinear's own output changed: {problem}; merge must leave "
                 "self unchanged")


@CHECKS.add("lora-gradients", "Gradients reach lora_A and lora_B only, with the right values")
def lora_gradients(ctx):
    base, layer = make_layer(ctx)
    a, b = set_ab(layer)
    x = inputs(ctx)
    (plain(layer(x)) ** 2).mean().backward()
    for n, p in base.named_parameters():
        if p.grad is not None and bool(p.grad.any()):
            fail(f"base.{n} received a gradient (largest |grad| {p.grad.abs().max().item():.3g}); the base is frozen")
    a_ = a.clone().requires_grad_(True)
    b_ = b.clone().requires_grad_(True)
    with torch.no_grad():
        base_out = base(x)
    (((base_out + (ALPHA / RANK) * (x @ a_.T @ b_.T)) ** 2).mean()).backward()
    for name, p, want in (("lora_A", layer.lora_A, a_.grad), ("lora_B", layer.lora_B, b_.grad)):
        if p.grad is None:
            fail(f"{name} received no gradient: it must take part in forward and require grad")
        problem = mismatch(p.grad, want, TOL, what="entries", against="the formula")
        if problem:
            fail(f"{name}.grad should be the gradient of base(x) + scaling * x @ A.T @ B.T: {problem}")


@CHECKS.add("lora-bf16", "A bfloat16 base works: lora_A/lora_B take the base's dtype and device")
def lora_bf16(ctx):
    base, layer = make_layer(ctx, dtype=torch.bfloat16)
    for name in ("lora_A", "lora_B"):
        p = getattr(layer, name)
        if p.dtype != torch.bfloat16 or p.device.type != ctx.device.type:
            fail(f"with a bfloat16 base on {ctx.device.type}, {name} is {p.dtype} on {p.device.type}; create it "
                 f"with device=base.weight.device, dtype=base.weight.dtype")
    x = inputs(ctx, dtype=torch.bfloat16)
    with torch.no_grad():
        layer.lora_B.zero_()  # the init itself is checked in float32
        out = plain(layer(x))
        if out.dtype != torch.bfloat16:
            fail(f"a bfloat16 input through a bfloat16 LoRALinear gave a {out.dtype} output, expected torch.bfloat16")
        problem = mismatch(out, base(x), EXACT, what="outputs", against="base(x)")
        if problem:
            fail(f"bfloat16, lora_B zero: the output should equal base(x): {problem}")
        set_ab(layer)
        merged = layer.merge()
        if merged.weight.dtype != torch.bfloat16:
            fail(f"merge() of a bfloat16 layer gave a {merged.weight.dtype} weight, expected torch.bfloat16")


# -- add_lora ---------------------------------------------------------------------------------

class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.q_proj_extra = nn.Linear(d, d)  # contains "q_proj" but is not named q_proj
        self.qq_proj = nn.Linear(d, d)  # ends with "q_proj" but is not named q_proj
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = self.norm(x)
        return x + self.q_proj(h) * torch.sigmoid(self.k_proj(h)) + self.v_proj(h) + \
            0.1 * self.q_proj_extra(h) + 0.1 * self.qq_proj(h)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = Attention(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        return x + self.mlp(self.attn(x))


class TinyModel(nn.Module):
    def __init__(self, d=8, vocab=11):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d), Block(d)])
        self.extra = nn.ModuleDict({"v_proj": nn.Linear(d, 5)})  # a target by name, differently shaped
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h)
        return self.head(h) + self.extra["v_proj"](h).sum(-1, keepdim=True)


EXPECTED_WRAPPED = sorted(["blocks.0.attn.q_proj", "blocks.0.attn.v_proj", "blocks.1.attn.q_proj",
                           "blocks.1.attn.v_proj", "extra.v_proj"])


def model_run(ctx, calls=1):
    def go():
        torch.manual_seed(0)
        model = TinyModel().to(ctx.device)
        originals = {n: m for n, m in model.named_modules() if isinstance(m, nn.Linear)}
        ids = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(3)).to(ctx.device)
        with torch.no_grad():
            before = model(ids)
        results, trained = [], {}
        for call in range(calls):
            if call:
                # Between calls the adapters train: give them values of their own, which a second
                # call must keep.
                for i, (name, module) in enumerate(sorted(lora_layers(ctx, model).items())):
                    trained[name] = set_ab(module, seed=10 + i)
            with ctx.given(f"add_lora(model, rank=2, alpha=4.0, target_modules={TARGETS}), call {call + 1}"):
                results.append(ctx.solution.add_lora(model, 2, 4.0, list(TARGETS)))
        return model, originals, ids, before, results, trained

    return ctx.cached(("add_lora", calls), go)


def lora_layers(ctx, model) -> dict:
    return {n: m for n, m in model.named_modules() if isinstance(m, ctx.solution.LoRALinear)}


def wrapped_names(ctx, model):
    return sorted(lora_layers(ctx, model))


@CHECKS.add("add-lora-targets", "add_lora wraps exactly the nn.Linear layers named in target_modules")
def add_lora_targets(ctx):
    model, originals, ids, before, results, _ = model_run(ctx)
    if results[0] is not model:
        fail(f"add_lora should modify the model in place and return it; it returned {type(results[0]).__name__}")
    seen = wrapped_names(ctx, model)
    if seen != EXPECTED_WRAPPED:
        extra = sorted(set(seen) - set(EXPECTED_WRAPPED))
        missing = sorted(set(EXPECTED_WRAPPED) - set(seen))
        why = " (match the attribute name exactly, not as a substring of the qualified name)" if any(
            "extra" in n and "q_proj" in n or "qq_proj" in n for n in extra) else ""
        fail(f"target_modules={TARGETS}: expected {len(EXPECTED_WRAPPED)} LoRALinear layers {EXPECTED_WRAPPED}, "
             f"got {len(seen)}; wrongly wrapped: {extra or 'none'}{why}; missed: {missing or 'none'}")
    for name in seen:
        module = model.get_submodule(name)
        if not torch.equal(module.base.weight, originals[name].weight):
            fail(f"{name}: the LoRALinear should wrap the model's original layer (same weights)")


@CHECKS.add("add-lora-freezes", "Only lora_A/lora_B train afterwards: r * (in + out) parameters per layer")
def add_lora_freezes(ctx):
    model, *_ = model_run(ctx)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    wrong = [n for n in trainable if not (n.endswith(".lora_A") or n.endswith(".lora_B"))]
    if wrong:
        fail(f"after add_lora, {len(wrong)} parameters that are not lora_A/lora_B still require gradients: "
             f"{listed(wrong)}; freeze every other parameter of the model")
    want = 0
    for n, m in TinyModel().named_modules():
        if n in EXPECTED_WRAPPED:
            want += 2 * (m.in_features + m.out_features)
    count = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if count != want:
        fail(f"trainable parameters: expected sum of r * (in + out) over the wrapped layers = {want} (r=2), "
             f"got {count}")


@CHECKS.add("add-lora-twice", "A second add_lora call wraps nothing again and keeps LoRA trainable")
def add_lora_twice(ctx):
    once, *_ = model_run(ctx, 1)
    model, *_, trained = model_run(ctx, 2)
    first, second = wrapped_names(ctx, once), wrapped_names(ctx, model)
    nested = [n for n in second if isinstance(model.get_submodule(n).base, ctx.solution.LoRALinear)
              or any(isinstance(m, ctx.solution.LoRALinear) for m in model.get_submodule(n).base.modules())]
    if second != first or nested:
        new = sorted(set(second) - set(first))
        fail(f"after a second add_lora call there are {len(second)} LoRALinear layers, after one call {len(first)}; "
             f"new: {listed(new)}, wrapped twice: {listed(nested)}. Skip LoRALinear modules and never look "
             f"inside them (their `base` must not be wrapped again)")
    if not first:
        nothing_to_check("add_lora wrapped no layer, so a second call had no adapter to leave alone")
    trainable = sorted(n for n, p in model.named_parameters() if p.requires_grad)
    want = sorted(f"{n}.{ab}" for n in first for ab in ("lora_A", "lora_B"))
    if trainable != want:
        fail(f"after a second call the trainable parameters should still be the {len(want)} lora_A/lora_B "
             f"tensors; got {len(trainable)}: missing {listed(sorted(set(want) - set(trainable)))}, "
             f"extra {listed(sorted(set(trainable) - set(want)))}")
    layers = lora_layers(ctx, model)
    lost = []
    for name, (a, b) in trained.items():
        now = layers[name]
        if not (torch.equal(now.lora_A.detach(), a) and torch.equal(now.lora_B.detach(), b)):
            change = max((now.lora_A.detach().float() - a.float()).abs().max().item(),
                         (now.lora_B.detach().float() - b.float()).abs().max().item())
            lost.append(f"{name} (changed by up to {change:.3g})")
    if lost:
        fail(f"a second add_lora call changed the trained lora_A/lora_B of {len(lost)} of {len(trained)} "
             f"adapters: {listed(lost)}; leave existing LoRALinear layers, and their values, as they are")
