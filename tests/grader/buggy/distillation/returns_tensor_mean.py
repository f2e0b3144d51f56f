# quizapp: exercise=distillation
# expect: fail epoch-mean-loss
"""Deliberately buggy: distill_epoch returns a tensor, not a float."""

import torch
import torch.nn.functional as F


def distillation_loss(student_logits, teacher_logits, labels, *,
                      temperature=4.0, alpha=0.7) -> torch.Tensor:
    T = temperature
    student = student_logits.float()
    # The teacher is a fixed target: detach so no gradient ever flows into it.
    teacher = teacher_logits.detach().float()
    # log_softmax, never log(softmax(...)): with logits of 1e4 softmax underflows to exact zeros
    # and log(0) = -inf. kl_div(input=log q_student, target=log p_teacher, log_target=True)
    # computes sum p_teacher * (log p_teacher - log q_student), i.e. KL(p_teacher || q_student).
    soft = F.kl_div(F.log_softmax(student / T, dim=-1), F.log_softmax(teacher / T, dim=-1),
                    reduction="batchmean", log_target=True)
    # Softened targets shrink the gradient by about 1/T^2; T^2 restores its size.
    soft = soft * (T * T)
    hard = F.cross_entropy(student, labels)
    return alpha * soft + (1.0 - alpha) * hard


def distill_epoch(student, teacher, loader, optimizer, *,
                  temperature=4.0, alpha=0.7, device) -> float:
    teacher.eval()  # dropout off, BatchNorm uses (and never updates) its running stats
    student.train()
    total, count = 0.0, 0
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        with torch.no_grad():  # no graph through the teacher (inference_mode would break backward)
            teacher_logits = teacher(inputs)
        student_logits = student(inputs)
        loss = distillation_loss(student_logits, teacher_logits, labels,
                                 temperature=temperature, alpha=alpha)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += loss.detach()
        count += 1
    return total / max(count, 1)
