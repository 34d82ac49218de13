/** The standard normal distribution: Φ, Φ⁻¹ and the complementary error function, to about 1e-13. */

const SQRT_PI = Math.sqrt(Math.PI);

/**
 * The complementary error function. For |x| < 3 the series erf(x) = 2/√π·e^(−x²)·Σ 2ⁿx^(2n+1)/(1·3·…·(2n+1))
 * (all terms positive, no cancellation), for larger x Laplace's continued fraction
 * erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), which keeps the relative precision
 * of the far tail. Relative error about 1e-13 or better.
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 3) {
    const x2 = 2 * x * x;
    let term = x, sum = x;
    for (let k = 1; k < 300; k++) {
      term *= x2 / (2 * k + 1);
      sum += term;
      if (term <= sum * 1e-17) break;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-x * x) * sum;
  }
  if (x > 27) return 0;
  let f = x;
  for (let k = 80; k >= 1; k--) f = x + k / 2 / f;
  return Math.exp(-x * x) / SQRT_PI / f;
}

/** Φ(x), the standard normal distribution function. */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

/**
 * Φ⁻¹(p), the standard normal quantile: a starting value from Abramowitz & Stegun 26.2.23 (error
 * below 4.5e-4), refined by Halley steps on Φ(x) − p until the step is below 1e-15 (a few steps).
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  // 1 − p is exact for p in [0.5, 1]; the lower tail keeps the relative precision.
  if (p > 0.5) return -normalQuantile(1 - p);
  const t = Math.sqrt(-2 * Math.log(p));
  let x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
  for (let i = 0; i < 8; i++) {
    const e = normalCdf(x) - p;
    const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
    const step = u / (1 + (x * u) / 2);
    x -= step;
    if (Math.abs(step) <= 1e-15 * Math.max(1, Math.abs(x))) break;
  }
  return x;
}
