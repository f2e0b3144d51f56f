# quizapp: exercise=distillation
# expect: fail loss-value loss-gradient returns-scalar-float32 large-logits-stable t-squared-scaling
# expect: fail epoch-trains-student epoch-mean-loss
# expect: skip no-grad-to-teacher teacher-eval-mode teacher-unchanged teacher-no-graph
# expect: no-number returns-scalar-float32
"""Does nothing: a loss of 0 that no logit reaches, and an epoch that trains nothing."""

import torch


def distillation_loss(student_logits, teacher_logits, labels, *, temperature=4.0, alpha=0.7) -> torch.Tensor:
    return torch.zeros((), device=student_logits.device)


def distill_epoch(student, teacher, loader, optimizer, *, temperature=4.0, alpha=0.7, device) -> float:
    return 0.0
