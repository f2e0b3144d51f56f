# quizapp: exercise=debug_accum_not_divided
# expect: fail matches-fixed-run: "zero_grad ran 181 times where the fixed script runs it 21"
# expect: says matches-fixed-run: "keeps only the last micro-batch's gradient"
import torch.nn.functional as F

# A near miss: zero_grad before every backward, so the step sees only the last
# micro-batch's gradient (the right size, the wrong samples).


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
