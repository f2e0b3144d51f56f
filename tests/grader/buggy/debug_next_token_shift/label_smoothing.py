# quizapp: exercise=debug_next_token_shift
# expect: fail predicts-next-token: "next-token loss is 4.068 nats" "the very token it was given 100%"
# expect: fail matches-fixed-run: "the targets are not shifted at all"
# expect: lacks matches-fixed-run: "the targets are shifted the wrong way" "the targets are shifted twice"
# expect: lacks matches-fixed-run: "torch.roll wraps"
import torch.nn.functional as F

# A near miss: label smoothing keeps the unshifted loss from reaching 0; the model still learns to copy.

VOCAB = 16


def lm_loss(logits, tokens):
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens.reshape(-1), label_smoothing=0.3)


def train(model, batches, optimizer):
    losses = []
    for tokens in batches:
        loss = lm_loss(model(tokens), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
