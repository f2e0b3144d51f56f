# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix: "dist.broadcast 32 times" "hides the drift"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.distributed as dist
import torch.nn.functional as F

# A cosmetic fix: copy rank 0's weights to every rank after each step, so they cannot differ.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            loss = F.mse_loss(model(x), y) / accum_steps
            loss_accum += loss.item()
            model.require_backward_grad_sync = micro_step == accum_steps - 1
            loss.backward()
        optimizer.step()
        for p in model.parameters():
            dist.broadcast(p.data, src=0)
        losses.append(loss_accum)
    return losses
