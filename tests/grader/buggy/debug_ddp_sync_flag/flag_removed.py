# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix: "4 all-reduces per step where the fixed script does 1"
import torch.nn.functional as F

# A cosmetic fix: drop the sync flag; DDP then all-reduces after every micro-batch: the weights are
# right, the communication is four times what the fixed script needs.


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
            loss.backward()
        optimizer.step()
        losses.append(loss_accum)
    return losses
