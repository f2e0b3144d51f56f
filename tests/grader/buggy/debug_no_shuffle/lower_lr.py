# quizapp: exercise=debug_no_shuffle
# expect: fail batches-mix-classes
# expect: fail honest-fix: "the learning rate at step 0 was 0.01 where the fixed script uses 0.1"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A cosmetic fix: a learning rate ten times lower makes each class's pull smaller.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    for group in optimizer.param_groups:
        group["lr"] *= 0.1
    loader = DataLoader(dataset, batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
