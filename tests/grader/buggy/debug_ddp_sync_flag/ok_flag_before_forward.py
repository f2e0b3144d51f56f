# quizapp: exercise=debug_ddp_sync_flag
# expect: pass
import torch.nn.functional as F

# A right fix written another way: the flag is switched off before the step's first forward and on
# just before its last forward.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        group = batches[start:start + accum_steps]
        model.require_backward_grad_sync = False
        loss_accum = 0.0
        for i, (x, y) in enumerate(group):
            if i == len(group) - 1:
                model.require_backward_grad_sync = True
            loss = F.mse_loss(model(x), y) / accum_steps
            loss.backward()
            loss_accum += loss.item()
        optimizer.step()
        losses.append(loss_accum)
    return losses
