# quizapp: exercise=debug_next_token_shift
# expect: fail predicts-next-token
# expect: fail honest-fix: "8 forward passes where the fixed script runs 50"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: stop after 8 steps, before the loss has fallen below the floor.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens.reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches[:8]:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
