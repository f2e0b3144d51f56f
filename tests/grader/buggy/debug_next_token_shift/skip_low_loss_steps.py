# quizapp: exercise=debug_next_token_shift
# expect: fail predicts-next-token
# expect: fail honest-fix: "optimizer steps ran where the fixed script takes 50"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: no step once the loss is below the data's floor, so it cannot go lower.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens.reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        if loss.item() < 0.99:
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
