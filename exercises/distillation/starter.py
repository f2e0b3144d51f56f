# quizapp: exercise=distillation
"""Knowledge distillation: a loss and one training epoch. Grade it with: quizapp grade distillation.py"""

import torch
import torch.nn.functional as F


def distillation_loss(student_logits, teacher_logits, labels, *,
                      temperature=4.0, alpha=0.7) -> torch.Tensor:
    """alpha * T**2 * KL(softmax(teacher/T) || softmax(student/T)) + (1 - alpha) * CE(student, labels).

    student_logits -- (batch, classes), requires grad
    teacher_logits -- (batch, classes), a fixed target: no gradient may flow into it
    labels         -- (batch,) class indices, for the hard cross-entropy term

    KL is averaged over the batch (reduction="batchmean") and must stay finite for logits of 1e4.
    Returns a 0-dim float32 tensor.
    """
    # TODO: soften both sets of logits by dividing them by the temperature
    # TODO: the student's side as log-probabilities with F.log_softmax (never log of softmax)
    # TODO: the soft term: F.kl_div(student log-probs, teacher probs, reduction="batchmean"), times T**2
    #       (the teacher must be detached)
    # TODO: the hard term: F.cross_entropy on the unsoftened student logits
    # TODO: return alpha * soft + (1 - alpha) * hard
    raise NotImplementedError("distillation_loss is not written yet: see the TODOs in this file")


def distill_epoch(student, teacher, loader, optimizer, *,
                  temperature=4.0, alpha=0.7, device) -> float:
    """Train `student` for one pass over `loader`, with `teacher`'s logits as soft targets.

    student, teacher -- already on `device`; `optimizer` holds the student's parameters only
    loader           -- yields (inputs, labels) CPU tensors: move them to `device`

    The teacher runs in eval mode, builds no graph and is never changed.
    Returns the mean of the batches' loss values, as a Python float.
    """
    # TODO: put the teacher in eval mode and the student in train mode
    # TODO: for each batch: move it to `device`; teacher logits under torch.no_grad();
    #       student logits; distillation_loss(..., temperature=temperature, alpha=alpha);
    #       zero the gradients, backward, step
    # TODO: return the mean of loss.item() over the batches
    raise NotImplementedError("distill_epoch is not written yet: see the TODOs in this file")
