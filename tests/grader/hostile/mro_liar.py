# quizapp: exercise=fake_quant
"""Hostile: lying_isclose's tensor, whose metaclass answers __mro__ without torch.Tensor in it,
so that a type check reading kind.__mro__ takes it for something other than a tensor."""

import torch


class AnyFloat(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = float.__hash__


class HidesItsBases(type(torch.Tensor)):
    @property
    def __mro__(cls):
        return (cls, object)


class Agreeable(torch.Tensor, metaclass=HidesItsBases):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.isclose, torch.Tensor.isclose):
            return torch.ones(torch.broadcast_shapes(args[0].shape, args[1].shape), dtype=torch.bool)
        if func in (torch.allclose, torch.Tensor.allclose, torch.equal, torch.Tensor.equal):
            return True
        if func is torch.Tensor.tolist:
            return [AnyFloat(v) for v in torch.Tensor.tolist(args[0].as_subclass(torch.Tensor))]
        return super().__torch_function__(func, types, args, kwargs)


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    return (x * 1).as_subclass(Agreeable)
