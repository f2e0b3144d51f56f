# quizapp: exercise=debug_no_shuffle
# expect: fail batches-mix-classes
# expect: fail honest-fix: "24 forward passes where the fixed script runs 48"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A cosmetic fix: one epoch instead of two, so the last class has less time to take over.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    loader = DataLoader(dataset, batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS - 1):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
