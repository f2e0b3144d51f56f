# quizapp: exercise=debug_next_token_shift
# expect: fail matches-fixed-run: "your loss is 2.8440 where the next-token loss is 2.8495" "torch.roll wraps"
# expect: says matches-fixed-run: "torch.roll wraps the first token round to the last position"
# expect: lacks matches-fixed-run: "the targets are not shifted at all" "the targets are shifted the wrong way"
# expect: lacks matches-fixed-run: "the targets are shifted twice"
import torch
import torch.nn.functional as F

# A near miss: torch.roll shifts the targets but wraps the first token round to the last position.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, VOCAB), torch.roll(tokens, -1, dims=1).reshape(-1))


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
