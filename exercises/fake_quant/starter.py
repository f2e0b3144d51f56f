# quizapp: exercise=fake_quant
"""Fake quantization for quantization-aware training. Grade it with: quizapp grade fake_quant.py"""

import torch


def fake_quantize(x, *, bits=8, axis=None) -> torch.Tensor:
    """Quantize x to signed `bits`-bit integers and back (symmetric, zero point 0).

      qmax  = 2**(bits - 1) - 1                   (127 for 8 bits)
      amax  = x.abs().max() over the whole tensor (axis=None),
              or over every dimension except `axis` (one value per channel)
      scale = amax / qmax, or 1 where amax is 0
      out   = clamp(round(x / scale), -qmax, qmax) * scale    (round half to even)

    The result has x's dtype and shape. Its gradient is straight-through: d out / d x = 1 everywhere,
    with the scale treated as a constant. Raise ValueError if bits is not in 2..16.
    """
    # TODO: validate bits (ValueError with a message that names the value)
    # TODO: qmax from bits
    # TODO: amax per tensor, or per channel with amax(dim=<all dims but axis>, keepdim=True);
    #       compute it from x.detach(): the scale is a constant for the gradient
    # TODO: scale, with 1 where amax is 0
    # TODO: the quantized-dequantized value with torch.round and torch.clamp
    # TODO: return it with a straight-through gradient (x plus a detached correction)
    raise NotImplementedError("fake_quantize is not written yet: see the TODOs in this file")
