"""Warp's math constants. In a kernel each is a float32 compile-time constant (a captured Python float)."""

import math

pi = PI = math.pi
e = E = math.e
tau = TAU = math.tau
half_pi = HALF_PI = math.pi / 2
inf = INF = math.inf
nan = NAN = math.nan
ln2 = LN2 = math.log(2.0)
ln10 = LN10 = math.log(10.0)
log2e = LOG2E = math.log2(math.e)
log10e = LOG10E = math.log10(math.e)
phi = PHI = (1.0 + math.sqrt(5.0)) / 2.0

__all__ = ["pi", "PI", "e", "E", "tau", "TAU", "half_pi", "HALF_PI", "inf", "INF", "nan", "NAN", "ln2", "LN2",
           "ln10", "LN10", "log2e", "LOG2E", "log10e", "LOG10E", "phi", "PHI"]
