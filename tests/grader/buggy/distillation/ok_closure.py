# quizapp: exercise=distillation
# expect: pass
"""Right, with the student's forward, loss and backward inside optimizer.step(closure), and the
epoch's mean taken over len(loader) batches."""

import torch
import torch.nn.functional as F


def distillation_loss(student_logits, teacher_logits, labels, *, temperature=4.0, alpha=0.7):
    t = temperature
    soft = F.kl_div(F.log_softmax(student_logits / t, dim=-1), F.log_softmax(teacher_logits.detach() / t, dim=-1),
                    reduction="batchmean", log_target=True)
    return alpha * t * t * soft + (1 - alpha) * F.cross_entropy(student_logits, labels)


def distill_epoch(student, teacher, loader, optimizer, *, temperature=4.0, alpha=0.7, device) -> float:
    teacher.eval()
    student.train()
    total = 0.0
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        with torch.no_grad():
            teacher_logits = teacher(inputs)

        def closure(inputs=inputs, labels=labels, teacher_logits=teacher_logits):
            optimizer.zero_grad()
            loss = distillation_loss(student(inputs), teacher_logits, labels, temperature=temperature, alpha=alpha)
            loss.backward()
            return loss

        total += optimizer.step(closure).item()
    return total / len(loader)
