# quizapp: exercise=debug_teacher_trained
"""The fixed script: the teacher runs in eval mode for the whole distillation.

Run it:    python debug_teacher_trained.py
Grade it:  quizapp grade debug_teacher_trained.py   (the grader calls distill() on its own student, teacher and data)

A small student learns from a frozen teacher (BatchNorm and dropout, already trained) on a
transfer set. The teacher's parameters never get a gradient, yet its predictions are different
after distillation, and the same batch gets different soft targets on every call. Rebuilt small
from a real report: vrvlive/knowlege-distillation#2, "teacher.eval() when performing distillation".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, CLASSES = 10, 5
STEPS, BATCH = 40, 32
TEACHER_STEPS = 60
TEMPERATURE, ALPHA = 2.0, 0.7  # ALPHA weighs the distillation term against the hard labels


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3),
                                 nn.Linear(64, CLASSES))

    def forward(self, x):
        return self.net(x)


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))

    def forward(self, x):
        return self.net(x)


def sample(g, n, shift=0.0):
    """n labelled points of the 5-class problem (the same class centres for every seed)."""
    centers = torch.Generator().manual_seed(1234)
    centers = 1.5 * torch.randn(CLASSES, FEATURES, generator=centers)
    y = torch.randint(0, CLASSES, (n,), generator=g)
    return centers[y] + torch.randn(n, FEATURES, generator=g) + shift, y


def make_teacher(seed, device="cpu"):
    """A teacher trained for TEACHER_STEPS steps, handed over as a training loop leaves it."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    teacher = Teacher()
    optimizer = torch.optim.Adam(teacher.parameters(), lr=0.01)
    for _ in range(TEACHER_STEPS):
        x, y = sample(g, 64)
        loss = F.cross_entropy(teacher(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return teacher.to(device)


def make_batches(seed, device="cpu"):
    """STEPS batches of the transfer set: the same problem, inputs shifted by 1 (another source)."""
    g = torch.Generator().manual_seed(seed)
    return [tuple(t.to(device) for t in sample(g, BATCH, shift=1.0)) for _ in range(STEPS)]


def kd_loss(student_logits, teacher_logits, labels):
    """ALPHA x T^2 x KL(teacher || student) at temperature T, plus (1 - ALPHA) x cross-entropy."""
    soft = F.kl_div(F.log_softmax(student_logits / TEMPERATURE, dim=-1),
                    F.softmax(teacher_logits / TEMPERATURE, dim=-1), reduction="batchmean")
    return ALPHA * TEMPERATURE**2 * soft + (1 - ALPHA) * F.cross_entropy(student_logits, labels)


def distill(student, teacher, batches, optimizer):
    """One optimizer step of the student per batch; returns the loss of every step."""
    student.train()
    # A frozen teacher must also be in eval mode: no_grad() stops gradients, not layer behaviour.
    # In train mode its dropout gives noisy soft targets and its BatchNorm normalises with each
    # transfer batch's statistics while overwriting its running statistics: the teacher drifts.
    teacher.eval()
    losses = []
    for x, y in batches:
        with torch.no_grad():
            teacher_logits = teacher(x)
        loss = kd_loss(student(x), teacher_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def accuracy(model, x, y):
    """Accuracy in eval mode, leaving the model's mode as it was."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        correct = (model(x).argmax(-1) == y).float().mean().item()
    model.train(was_training)
    return correct


def main():
    teacher = make_teacher(seed=0)
    x_val, y_val = sample(torch.Generator().manual_seed(99), 1000)  # the teacher's own validation set
    before = {k: v.clone() for k, v in teacher.state_dict().items() if v.is_floating_point()}
    print(f"teacher validation accuracy before distillation: {accuracy(teacher, x_val, y_val):.1%}")

    torch.manual_seed(1)
    student = Student()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
    batches = make_batches(seed=1)
    losses = distill(student, teacher, batches, optimizer)
    for step in range(0, STEPS, 10):
        print(f"step {step:3d}  loss {losses[step]:.4f}")
    after = teacher.state_dict()
    moved = {k: (after[k] - v).abs().max().item() for k, v in before.items()}
    name = max(moved, key=moved.get)
    print(f"teacher validation accuracy after distillation:  {accuracy(teacher, x_val, y_val):.1%}  "
          f"(teacher.{name} moved by up to {moved[name]:.4f})")
    with torch.no_grad():
        first, second = teacher(batches[0][0])[0], teacher(batches[0][0])[0]
    print("the teacher's logits for one transfer input, asked twice:")
    print("  ", first.numpy().round(2), "\n  ", second.numpy().round(2))


if __name__ == "__main__":
    main()
