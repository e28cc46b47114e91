/* FP16 scale and bias handling and the joint least-squares fit of the encoder's WebAssembly kernel
   (included by native/fit.c, one translation unit, so one wasm module): the half roundings, joint_fit
   with its refit rounds, the exported passes (pass_fp4, pass_t158) and polish_stored. */
/* ---- The whole joint fit of one mode (src/fit/joint.ts jointCandidate from its ranking on, and
   src/fit/refit.ts refit): start ranking, the best start's pass, the refit rounds. The FP16
   roundings are src/half.ts's, operation for operation; their rare cases outside the normal
   range call back into JavaScript (nearestHalfBits, halfToFloat). */

__attribute__((import_module("env"), import_name("nearest_half_bits"))) int js_nearest_half_bits(double x, int quantum);
__attribute__((import_module("env"), import_name("half_to_float"))) double js_half_to_float(int bits);

#define HALF_MAX 65504.0
#define MIN_NORMAL_HALF (1.0 / 16384.0)

/* 2^k, k in [-1022, 1023] (exact) */
static inline double pow2(int k) {
  return __builtin_bit_cast(double, (unsigned long long)(k + 1023) << 52);
}
static inline int exponent_of(double a) {
  return (int)((__builtin_bit_cast(unsigned long long, a) >> 52) & 0x7ff) - 1023;
}

static int scale_to_half_bits(double s) {
  if (!(s >= MIN_NORMAL_HALF && s <= HALF_MAX)) return s > 0 ? js_nearest_half_bits(s, 1) : 0;
  const int e = exponent_of(s);
  const double f = s * pow2(10 - e);
  const double floorF = __builtin_floor(f);
  const double frac = f - floorF;
  const double r = frac > 0.5 || (frac == 0.5 && ((int)floorF & 1) == 1) ? floorF + 1 : floorF;
  const int bits = ((e + 15) << 10) + ((int)r - 1024);
  return bits > 0x7bff ? 0x7bff : bits;
}

static int bias_to_half_bits(double b, int v2) {
  const double a = b < 0 ? -b : b;
  if (!(a >= MIN_NORMAL_HALF && a <= HALF_MAX)) return js_nearest_half_bits(b, v2 ? 16 : 1);
  const int e = exponent_of(a);
  const double f = a * pow2((v2 ? 6 : 10) - e);
  const double floorF = __builtin_floor(f);
  const double frac = f - floorF;
  const double r = frac > 0.5 || (frac == 0.5 && ((int)floorF & 1) == 1) ? floorF + 1 : floorF;
  int bits = ((e + 15) << 10) + ((v2 ? (int)r * 16 : (int)r) - 1024);
  const int maxBits = v2 ? 0x7bf0 : 0x7bff;
  if (bits > maxBits) bits = maxBits;
  return b < 0 ? (0x8000 | bits) : bits;
}

static double half_value(int bits) {
  const int exponent = (bits >> 10) & 0x1f;
  if (exponent == 0x1f) return js_half_to_float(bits);
  const int mantissa = bits & 0x3ff;
  const double magnitude = exponent == 0 ? mantissa * pow2(-24) : (1024 + mantissa) * pow2(exponent - 25);
  return bits & 0x8000 ? -magnitude : magnitude;
}

/* src/fit/joint.ts cannotBeat */
static int cannot_beat(double n, double S, double sq, double sqq, double sqv, double sv, double svv, double den, double bestErr) {
  if (!(bestErr < __builtin_inf())) return 0;
  const double asq = sq < 0 ? -sq : sq;
  const double asv = sv < 0 ? -sv : sv;
  const double asqv = sqv < 0 ? -sqv : sqv;
  const double explained = (n * sqv * sqv + 2 * asq * asv * asqv + sqq * sv * sv) / den;
  const double fStar = svv - (n * sqv * sqv - 2 * sq * sv * sqv + sqq * sv * sv) / den;
  const double sMax = S * (1 + 1.0 / 1024) + 1.0 / 16777216;
  const double bMax = ((asv + sMax * asq) / n) * (1 + 1.0 / 64) + 1.0 / 1048576;
  const double terms = svv + 2 * sMax * asqv + 2 * bMax * asv + sMax * sMax * sqq + 2 * sMax * bMax * asq + n * bMax * bMax;
  return fStar - 1e-12 * (svv + explained + terms) >= bestErr;
}

static int ls_scale_bits, ls_bias_bits;

/* src/fit/joint.ts leastSquaresOfSums */
static double least_squares_of_sums(double n, double sq, double sqq, double sqv, double sv, double svv, int v2, double bestErr) {
  const double den = n * sqq - sq * sq;
  if (!(den > 0)) return __builtin_inf();
  const double S = (n * sqv - sq * sv) / den;
  if (!(S > 0)) return __builtin_inf();
  if (cannot_beat(n, S, sq, sqq, sqv, sv, svv, den, bestErr)) return __builtin_inf();
  ls_scale_bits = scale_to_half_bits(S);
  const double s = half_value(ls_scale_bits);
  ls_bias_bits = bias_to_half_bits((sv - s * sq) / n, v2);
  const double b = half_value(ls_bias_bits);
  return svv - 2 * s * sqv - 2 * b * sv + s * s * sqq + 2 * s * b * sq + n * b * b;
}

/* codes of the refit rounds (src/fit/workspace.ts roundCodesA / B) */
signed char round_codes[2][MAX_LEAF];

/* src/fit/codes.ts assignZero: every code 0 */
static void pass_zero(int n, double B, signed char *out) {
  double sse = 0, maxAbs = 0;
  const double w0 = (double)(float)B;
  for (int i = 0; i < n; i++) {
    out[i] = 0;
    const double e = fit_values[i] - w0;
    sse += e * e;
    const double a = __builtin_fabs(e);
    if (a > maxAbs) maxAbs = a;
  }
  pass_sums[0] = sse;
  pass_sums[1] = maxAbs;
  pass_sums[2] = 0;
  pass_sums[3] = 0;
  pass_sums[4] = 0;
}


/* src/fit/codes.ts pass into round_codes[buf] */
static void pass_into(int n, int fp4, int scaleBits, int biasBits, int buf, double stop_at) {
  const double S = half_value(scaleBits), B = half_value(biasBits);
  if (!(S > 0)) pass_zero(n, B, round_codes[buf]);
  else if (fp4) pass_fp4_into(n, S, B, stop_at, round_codes[buf]);
  else pass_t158_into(n, S, B, stop_at, round_codes[buf]);
}

/* joint_fit's result: scale bits, bias bits, sse, max |e|, sum q, sum q^2, sum q w, the codes' buffer
   (0 / 1), and whether any start was ranked finite (0: the caller fits the flat leaf) */
double fit_result[10];

/* jointCandidate after its starts (in start_scale / start_bias) are set: ranking over values[0],
   [stride], ... below n (rn weights whose sum and sum of squares are rsv, rsvv), the best start's
   pass and `refit` (sv: the leaf's index-order sum). n even. */
void joint_fit(int n, int stride, int k, int fp4, int v2, int maxIterations, double sv, double rn, double rsv, double rsvv) {
  if (fp4) rank_fp4(n, stride, k);
  else rank_t158(n, stride, k);
  double bestErr = __builtin_inf();
  int bestScaleBits = 0, bestBiasBits = 0;
  for (int s = 0; s < k; s++) {
    const double err = least_squares_of_sums(rn, start_sums[3 * s], start_sums[3 * s + 1], start_sums[3 * s + 2], rsv, rsvv, v2, bestErr);
    if (err < bestErr) {
      bestErr = err;
      bestScaleBits = ls_scale_bits;
      bestBiasBits = ls_bias_bits;
    }
  }
  if (!(bestErr < __builtin_inf())) {
    fit_result[8] = 0;
    return;
  }
  fit_result[8] = 1;
  const double dn = n;
  pass_into(n, fp4, bestScaleBits, bestBiasBits, 0, __builtin_inf());
  int buf = 0, scaleBits = bestScaleBits, biasBits = bestBiasBits;
  double sse = pass_sums[0], maxAbs = pass_sums[1], sq = pass_sums[2], sqq = pass_sums[3], sqv = pass_sums[4];
  for (int it = 0; it < maxIterations; it++) {
    const double den = dn * sqq - sq * sq;
    if (!(den > 0)) break;
    const double S = (dn * sqv - sq * sv) / den;
    if (!(S > 0)) break;
    const int nextScaleBits = scale_to_half_bits(S);
    const int nextBiasBits = bias_to_half_bits((sv - half_value(nextScaleBits) * sq) / dn, v2);
    if (nextScaleBits == scaleBits && nextBiasBits == biasBits) break;
    pass_into(n, fp4, nextScaleBits, nextBiasBits, 1 - buf, sse);
    if (!(pass_sums[0] < sse)) break;
    buf = 1 - buf;
    scaleBits = nextScaleBits;
    biasBits = nextBiasBits;
    sse = pass_sums[0];
    maxAbs = pass_sums[1];
    sq = pass_sums[2];
    sqq = pass_sums[3];
    sqv = pass_sums[4];
  }
  fit_result[0] = scaleBits;
  fit_result[1] = biasBits;
  fit_result[2] = sse;
  fit_result[3] = maxAbs;
  fit_result[4] = sq;
  fit_result[5] = sqq;
  fit_result[6] = sqv;
  fit_result[7] = buf;
}

int pass_fp4(int n, double S, double B, double stop_at) {
  return pass_fp4_into(n, S, B, stop_at, pass_codes);
}

int pass_t158(int n, double S, double B, double stop_at) {
  return pass_t158_into(n, S, B, stop_at, pass_codes);
}

/* ---- src/fit/polish.ts polishStored, whole: the rounds, their pairs (seen ones skipped), the pair
   errors (polish_fp4's loop for FP4, a pass each for T158), the winner's pass. */

static int step_half(int bits, int steps) {
  const int key = (bits & 0x8000 ? -(bits & 0x7fff) : bits) + steps;
  const int magnitude = key < 0 ? -key : key;
  if (magnitude >= 0x7c00) return -1;
  return key < 0 ? (0x8000 | magnitude) : magnitude;
}

/* polish_stored's result: fit_result as joint_fit's (scale bits, bias bits, sse, max |e|, sum q, sum q^2,
   sum q w, codes buffer), fit_result[8] = 1 if it moved (else the start is kept as it is) */
void polish_stored(int n, int fp4, int v2, int startScaleBits, int startBiasBits, double startSse) {
  const int biasStep = v2 ? 16 : 1;
  int seen[32];
  int seenCount = 1;
  seen[0] = (startScaleBits << 16) | startBiasBits;
  int cs[8], cb[8];
  double err[8];
  int scaleBits = startScaleBits, biasBits = startBiasBits, buf = -1;
  double sse = startSse;
  int moved = 0;
  for (int round = 0; round < 3; round++) {
    const int s0 = scaleBits, b0 = biasBits;
    int count = 0;
    for (int ds = -1; ds <= 1; ds++) {
      const int sb = ds == 0 ? s0 : step_half(s0, ds);
      if (sb <= 0 || (sb & 0x8000)) continue;
      for (int db = -1; db <= 1; db++) {
        if (ds == 0 && db == 0) continue;
        const int bb = db == 0 ? b0 : step_half(b0, db * biasStep);
        if (bb < 0) continue;
        const int key = (sb << 16) | bb;
        int measured = 0;
        for (int j = 0; j < seenCount; j++) {
          if (seen[j] == key) {
            measured = 1;
            break;
          }
        }
        if (measured) continue;
        seen[seenCount++] = key;
        cs[count] = sb;
        cb[count] = bb;
        count++;
      }
    }
    const double stop = sse;
    const int spare = buf == 0 ? 1 : 0;
    if (fp4) {
      if (count > 0) {
        for (int k = 0; k < count; k++) {
          pair_scale[k] = half_value(cs[k]);
          pair_bias[k] = half_value(cb[k]);
        }
        polish_fp4(n, count, stop);
        for (int k = 0; k < count; k++) err[k] = pair_error[k];
      }
    } else {
      for (int k = 0; k < count; k++) {
        pass_into(n, 0, cs[k], cb[k], spare, stop);
        err[k] = pass_sums[0];
      }
    }
    int win = -1;
    double winErr = stop;
    for (int k = 0; k < count; k++) {
      if (err[k] < winErr) {
        winErr = err[k];
        win = k;
      }
    }
    if (win < 0) break;
    pass_into(n, fp4, cs[win], cb[win], spare, __builtin_inf());
    scaleBits = cs[win];
    biasBits = cb[win];
    buf = spare;
    sse = pass_sums[0];
    moved = 1;
    fit_result[2] = pass_sums[0];
    fit_result[3] = pass_sums[1];
    fit_result[4] = pass_sums[2];
    fit_result[5] = pass_sums[3];
    fit_result[6] = pass_sums[4];
  }
  fit_result[0] = scaleBits;
  fit_result[1] = biasBits;
  fit_result[7] = buf;
  fit_result[8] = moved;
}
