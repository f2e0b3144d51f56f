# quizapp: exercise=debug_total_loss_graph
"""Near miss: the usual advice when memory grows: move what autograd saves to the CPU. The graph, and the leak, stay."""


import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 16, 128, 4
STEPS, BATCH, VAL_BATCH = 40, 32, 256


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Dropout(0.1),
                                 nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))

    def forward(self, x):
        return self.net(x)


def _sample(g, centers, n):
    y = torch.randint(0, CLASSES, (n,), generator=g)
    return centers[y] + 1.5 * torch.randn(n, FEATURES, generator=g), y


def make_batches(seed, device="cpu"):
    """STEPS training batches of 4-class data around random centres."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(CLASSES, FEATURES, generator=g)
    return [tuple(t.to(device) for t in _sample(g, centers, BATCH)) for _ in range(STEPS)]


def make_val_batch(seed, device="cpu"):
    """One held-out batch of VAL_BATCH samples from the same distribution (same seed, same centres)."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(CLASSES, FEATURES, generator=g)
    g.manual_seed(seed + 1)
    return tuple(t.to(device) for t in _sample(g, centers, VAL_BATCH))


def train(model, batches, optimizer, val_batch, log=None):
    """One optimizer step per batch, then the held-out batch is scored; returns the training loss of
    every step. `log(step, loss, val_mean)`, if given, receives the running mean of the held-out loss."""
    losses = []
    val_total = 0.0
    x_val, y_val = val_batch
    model.train()
    for step, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        model.eval()
        with torch.autograd.graph.save_on_cpu():
            val_loss = F.cross_entropy(model(x_val), y_val)
        val_total += val_loss
        model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses


class SavedTensorMeter:
    """Counts the activations autograd has saved for backward passes and still holds (parameters
    not counted): `with SavedTensorMeter(model) as meter: ... meter.held()` -> (tensors, bytes)."""

    class _Saved:
        __slots__ = ("tensor", "__weakref__")

        def __init__(self, tensor):
            self.tensor = tensor.detach()  # detached: holding it creates no cycle through its grad_fn

    def __init__(self, model):
        self._params = {p.untyped_storage().data_ptr() for p in model.parameters()}
        self._saved = []
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def _pack(self, tensor):
        saved = self._Saved(tensor)
        self._saved.append(weakref.ref(saved))
        return saved

    @staticmethod
    def _unpack(saved):
        return saved.tensor

    def held(self):
        storages = {}
        for ref in self._saved:
            saved = ref()
            if saved is not None:
                storage = saved.tensor.untyped_storage()
                if storage.data_ptr() not in self._params:
                    storages[storage.data_ptr()] = storage.nbytes()
        return len(storages), sum(storages.values())

    def __enter__(self):
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def log(step, loss, val_mean):
        tensors, nbytes = meter.held()
        print(f"step {step:3d}  loss {loss:.4f}  held-out {val_mean:.4f}  "
              f"autograd holds {tensors:4d} saved tensors, {nbytes / 2**20:6.2f} MiB")

    with SavedTensorMeter(model) as meter:
        train(model, make_batches(seed=1), optimizer, make_val_batch(seed=1), log=log)


if __name__ == "__main__":
    main()
