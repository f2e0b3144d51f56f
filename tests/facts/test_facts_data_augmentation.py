"""Facts taught by questions/data-augmentation.yaml, checked with plain torch tensors.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true. Numeric questions compute the keyed value themselves. The cards' findings
from papers (mixup's robustness to corrupted labels, Zhang et al. 2018; its better calibration,
Thulasidasan et al. 2019; CutMix's localisation, Yun et al. 2019) are not re-run; their tests check
the mixing arithmetic the cards state.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions

from quizapp.bank.answers import check_answer

TOPIC = "data-augmentation"



@pytest.mark.verifies("aug-mixup-target-loss")
def test_mixup_loss_equals_cross_entropy_on_the_mixed_target():
    lam = 0.7
    # 4 classes; class a = 0, class b = 1; softmax gives p(a) = 0.5, p(b) = 0.25
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.125, 0.125]]))
    y_a, y_b = torch.tensor([0]), torch.tensor([1])

    two_term = lam * F.cross_entropy(logits, y_a) + (1 - lam) * F.cross_entropy(logits, y_b)
    soft = lam * F.one_hot(y_a, 4).float() + (1 - lam) * F.one_hot(y_b, 4).float()
    soft_target = F.cross_entropy(logits, soft)

    assert two_term.item() == pytest.approx(topic_questions(TOPIC)["aug-mixup-target-loss"].answer, abs=1e-4)
    assert two_term.item() == pytest.approx(1.3 * math.log(2), rel=1e-6)
    assert soft_target.item() == pytest.approx(two_term.item(), rel=1e-6)
    # the slips named in the explanation give different numbers
    assert F.cross_entropy(logits, y_a).item() == pytest.approx(0.6931, abs=1e-4)
    half = 0.5 * F.cross_entropy(logits, y_a) + 0.5 * F.cross_entropy(logits, y_b)
    assert half.item() == pytest.approx(1.0397, abs=1e-4)
    # the tolerance takes the value rounded to 2 or more places and rejects both slips
    q = topic_questions(TOPIC)["aug-mixup-target-loss"]
    assert all(check_answer(q, f"{two_term.item():.{places}f}").correct for places in (2, 3, 4))
    assert not check_answer(q, "0.6931").correct and not check_answer(q, "1.0397").correct


@pytest.mark.verifies("aug-mixup-target-loss")
def test_mixup_of_a_batch_with_a_permutation_is_linear_in_the_target():
    torch.manual_seed(0)
    out = torch.randn(6, 5)
    y = torch.tensor([0, 1, 2, 3, 4, 0])
    perm = torch.randperm(6)
    lam = 0.3
    two_term = lam * F.cross_entropy(out, y) + (1 - lam) * F.cross_entropy(out, y[perm])
    soft = lam * F.one_hot(y, 5).float() + (1 - lam) * F.one_hot(y[perm], 5).float()
    assert F.cross_entropy(out, soft).item() == pytest.approx(two_term.item(), rel=1e-6)


@pytest.mark.verifies("aug-mixup-alpha")
def test_beta_alpha_shapes_the_mixing_weight():
    small = torch.distributions.Beta(torch.tensor(0.2), torch.tensor(0.2))
    uniform = torch.distributions.Beta(torch.tensor(1.0), torch.tensor(1.0))
    points = torch.tensor([0.05, 0.5, 0.95])

    dens = small.log_prob(points).exp()
    assert dens[0].item() == pytest.approx(1.2046, abs=1e-3)
    assert dens[1].item() == pytest.approx(0.3190, abs=1e-3)
    # choice 2: true. U-shaped, and alpha = 1 is uniform on [0, 1]
    assert dens[0] > dens[1] < dens[2]
    assert torch.allclose(uniform.log_prob(points).exp(), torch.ones(3))

    torch.manual_seed(0)
    draws = small.sample((20000,))
    near_ends = ((draws < 0.1) | (draws > 0.9)).float().mean().item()
    assert near_ends > 0.5  # choice 2: most draws are dominated by one of the two images
    near_half = ((draws > 0.4) & (draws < 0.6)).float().mean().item()
    assert near_half < 0.1  # choice 0: false, not concentrated around 0.5
    assert small.mean.item() == pytest.approx(0.5)  # choice 1: false, the mean is 0.5, not 0.2
    assert draws.mean().item() == pytest.approx(0.5, abs=0.02)
    assert (draws > 0.2).float().mean().item() > 0.3  # choice 3: false, lambda often exceeds 0.2
    assert right_choices(TOPIC, "aug-mixup-alpha") == {2}


def _cutmix(a: torch.Tensor, b: torch.Tensor, cx: int, cy: int, cut_w: int, cut_h: int):
    """Paste the (clipped) box of b into a; return the mixed image and the area-based lambda."""
    h, w = a.shape[-2:]
    x1, x2 = max(cx - cut_w // 2, 0), min(cx + cut_w // 2, w)
    y1, y2 = max(cy - cut_h // 2, 0), min(cy + cut_h // 2, h)
    mixed = a.clone()
    mixed[..., y1:y2, x1:x2] = b[..., y1:y2, x1:x2]
    lam = 1 - (x2 - x1) * (y2 - y1) / (w * h)
    return mixed, lam


@pytest.mark.verifies("aug-cutmix-clipped-lambda")
def test_cutmix_lambda_comes_from_the_clipped_box_area():
    a = torch.ones(3, 32, 32)
    b = torch.zeros(3, 32, 32)

    mixed, lam = _cutmix(a, b, cx=4, cy=4, cut_w=16, cut_h=16)
    share_from_a = mixed[0].mean().item()  # a's pixels are 1, b's are 0
    assert lam == topic_questions(TOPIC)["aug-cutmix-clipped-lambda"].answer
    assert share_from_a == pytest.approx(lam)
    assert share_from_a != pytest.approx(0.75)  # the unclipped box's lambda is wrong here
    # the prompt asks for two or more decimal places: every such rounding passes, the trap does not
    q = topic_questions(TOPIC)["aug-cutmix-clipped-lambda"]
    assert all(check_answer(q, f"{lam:.{places}f}").correct for places in (2, 3, 4, 6))
    assert not check_answer(q, "0.75").correct and not check_answer(q, "0.140625").correct

    mixed, lam = _cutmix(a, b, cx=16, cy=16, cut_w=16, cut_h=16)  # box fully inside
    assert lam == 0.75 and mixed[0].mean().item() == pytest.approx(0.75)


@pytest.mark.verifies("aug-offline-split-leak")
def test_a_random_split_of_augmented_copies_leaks_and_a_group_split_does_not():
    sources, copies = 5000, 10
    source_of = torch.arange(sources).repeat_interleave(copies)  # 50,000 images, 10 per source
    g = torch.Generator().manual_seed(0)
    order = torch.randperm(sources * copies, generator=g)
    train, val = order[:40_000], order[40_000:]  # a random 80/20 split of the images
    in_train = torch.zeros(sources, dtype=torch.bool)
    in_train[source_of[train]] = True
    leaked = in_train[source_of[val]].float().mean().item()
    assert leaked > 0.99  # nearly every validation image has a sibling of the same source in training
    # split the sources first, then augment: no validation source is ever seen in training
    src_order = torch.randperm(sources, generator=g)
    train_src = torch.zeros(sources, dtype=torch.bool)
    train_src[src_order[:4000]] = True
    val_images = torch.nonzero(~train_src[source_of]).squeeze(1)
    assert val_images.numel() == 10_000 and not train_src[source_of[val_images]].any()


@pytest.mark.verifies("aug-mixup-vs-cutmix")
def test_mixup_and_cutmix_targets_and_losses():
    torch.manual_seed(0)
    a, b = torch.rand(3, 32, 32), torch.rand(3, 32, 32)
    lam = 0.3
    blended = lam * a + (1 - lam) * b  # mixup: every pixel is an overlay
    assert (blended != a).all() and (blended != b).all()  # no pixel of either image survives as it was
    pasted, lam_cut = _cutmix(a, b, cx=30, cy=16, cut_w=16, cut_h=16)  # the box is clipped at the border
    from_a = (pasted == a).all(dim=0)
    assert ((pasted == a) | (pasted == b)).all()  # CutMix: every pixel is a real pixel of a or b
    assert lam_cut == pytest.approx(from_a.float().mean().item())  # λ = area share after clipping
    assert lam_cut != pytest.approx(1 - 16 * 16 / 32 / 32)  # not the unclipped box's share
    # the two-term loss equals cross-entropy on the mixed soft target, label smoothing folded in
    logits = torch.randn(4, 5)
    y_a, y_b = torch.tensor([0, 1, 2, 3]), torch.tensor([4, 4, 0, 1])
    for smoothing in (0.0, 0.1):
        two_term = lam * F.cross_entropy(logits, y_a, label_smoothing=smoothing) + (1 - lam) * F.cross_entropy(
            logits, y_b, label_smoothing=smoothing)
        smooth = lambda y: F.one_hot(y, 5).float() * (1 - smoothing) + smoothing / 5  # noqa: E731
        soft = lam * smooth(y_a) + (1 - lam) * smooth(y_b)
        assert F.cross_entropy(logits, soft).item() == pytest.approx(two_term.item(), rel=1e-6)
    # Beta(α, α): mixup's 0.8 and CutMix's 1.0 are both symmetric around 0.5; α = 1 is uniform
    assert torch.distributions.Beta(0.8, 0.8).mean.item() == pytest.approx(0.5)
    assert torch.distributions.Beta(1.0, 1.0).log_prob(torch.tensor([0.1, 0.9])).exp().tolist() == pytest.approx([1, 1])


def _cutmix_in_place(x, y, perm, box, num_classes):
    """The function of aug-cutmix-in-place, as the prompt writes it."""
    y0, y1, x0, x1 = box
    for i in range(len(x)):
        x[i, :, y0:y1, x0:x1] = x[perm[i], :, y0:y1, x0:x1]
    H, W = x.shape[-2:]
    lam = 1 - (y1 - y0) * (x1 - x0) / (H * W)
    t = F.one_hot(y, num_classes).to(x.dtype)
    return x, lam * t + (1 - lam) * t[perm]


@pytest.mark.verifies("aug-cutmix-in-place")
def test_cutmix_loop_reads_pasted_boxes_and_writes_the_callers_batch():
    box = (1, 3, 1, 3)
    clean = torch.stack([torch.full((3, 4, 4), 0.0), torch.full((3, 4, 4), 1.0)])  # image 0 zeros, image 1 ones
    x, y, perm = clean.clone(), torch.tensor([3, 7]), torch.tensor([1, 0])
    x_before = x
    mixed, targets = _cutmix_in_place(x, y, perm, box, 10)
    inside = (slice(None), slice(1, 3), slice(1, 3))
    # choice 0: true. Image 1 got its own box back, yet its target names y[0]
    assert torch.equal(mixed[1], clean[1])
    lam = 1 - 4 / 16
    assert targets[1, 3].item() == pytest.approx(1 - lam) and targets[1, 7].item() == pytest.approx(lam)
    # choice 1: false. Image 0 did get image 1's box
    assert torch.equal(mixed[0][inside], clean[1][inside]) and not torch.equal(mixed[0], clean[0])
    # choice 2: true. The caller's x is the returned tensor, mixed
    assert mixed is x_before and not torch.equal(x, clean)
    # choice 3: false. One vectorised assignment reads right (x[perm] is a new tensor) but still writes into x
    x = clean.clone()
    x[:, :, 1:3, 1:3] = x[perm, :, 1:3, 1:3]
    assert torch.equal(x[1][inside], clean[0][inside]) and torch.equal(x[0][inside], clean[1][inside])
    assert not torch.equal(x, clean)
    # choice 4: false. A batch that does not require grad takes in-place writes silently
    assert not clean.requires_grad
    # the fix: write into a clone, read from the untouched original
    x = clean.clone()
    out = x.clone()
    out[:, :, 1:3, 1:3] = x[perm][:, :, 1:3, 1:3]
    assert torch.equal(x, clean) and torch.equal(out[1][inside], clean[0][inside])
    # a longer permutation: every sample whose partner came earlier in the loop reads a pasted box
    x = torch.arange(4.0).reshape(4, 1, 1, 1).expand(4, 1, 2, 2).clone()
    _cutmix_in_place(x, torch.arange(4), torch.tensor([1, 2, 3, 0]), (0, 2, 0, 2), 4)
    assert x[:, 0, 0, 0].tolist() == [1.0, 2.0, 3.0, 1.0]  # sample 3 should hold 0, holds 1
    assert right_choices(TOPIC, "aug-cutmix-in-place") == {0, 2}


@pytest.mark.verifies("aug-one-hot-num-classes")
def test_one_hot_without_num_classes_sizes_from_the_batch():
    y = torch.tensor([0, 3, 8, 8, 1, 5])  # no class 9 in this batch
    t = F.one_hot(y).float()
    assert t.shape == (6, 9)  # choice 1: true, y.max() + 1 columns
    logits = torch.randn(6, 10)
    perm = torch.randperm(6)
    assert t[perm].shape == t.shape  # choice 0: false, row indexing keeps the columns
    assert sorted(torch.randperm(1000).tolist()) == list(range(1000))  # ...and randperm never repeats
    for lam in (0.0, 1.0):  # choice 3: false, lam changes values, not shapes
        assert (lam * t + (1 - lam) * t[perm]).shape == (6, 9)
    with pytest.raises(RuntimeError):  # choice 2: false, the rows match; the classes do not
        F.cross_entropy(logits, 0.7 * t + 0.3 * t[perm])
    assert F.cross_entropy(logits, F.one_hot(y, 10).float()).isfinite()
    # how often a balanced 10-class batch of 64 lacks class 9
    assert 0.9**64 == pytest.approx(0.0012, abs=5e-5) and round(1 / 0.9**64) == 848
    gen = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 10, (20000, 64), generator=gen)
    assert (labels.max(dim=1).values < 9).float().mean().item() == pytest.approx(0.0012, abs=0.0006)
    # the fix's side effects: fixed width, out-of-range and negative labels raise, dtype follows the logits
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(torch.tensor([0, 10]), 10)
    with pytest.raises(RuntimeError, match="non-negative"):
        F.one_hot(torch.tensor([0, -100]), 10)
    assert F.one_hot(y).dtype == torch.int64 and F.one_hot(y).float().dtype == torch.float32
    bf16 = logits.bfloat16()
    assert F.cross_entropy(bf16, F.one_hot(y, 10).float()).dtype == torch.float32
    assert F.cross_entropy(bf16, F.one_hot(y, 10).to(bf16.dtype)).dtype == torch.bfloat16
    assert right_choices(TOPIC, "aug-one-hot-num-classes") == {1}
