//! The lane (vector) operations every host implements once: [`Lanes`], over whole vector
//! registers of 32-bit lanes (or 64-bit lanes, where a method says so).
//!
//! The methods are what the code generators above compose their lane-wise arithmetic of:
//! bitwise and integer operations, compares to masks (all ones or zero per lane), selects,
//! shifts, f32 and f64 arithmetic, conversions between f32 lanes and f64 halves, constants,
//! loads and stores, table gathers and the few horizontal steps of code that keeps one
//! vector's components in a register. Where two hosts encode an operation differently (a
//! magnitude compare, a select, a shift by a signed count) the method names the result and
//! each host picks its sequence; the order of steps, constants and special cases belongs to
//! the callers.
//!
//! Registers are the caller's: every method names its destination and sources, and the few
//! that need scratch registers take them as arguments. A host may keep its own scratch
//! registers for constants (see its implementation); those never hold a caller's value.
//!
//! Implementations: `crate::host::x64::lanes` (AVX2 eight-lane registers and the 128-bit form
//! with its SSE4.1 fallback) and `crate::host::a64::lanes` (NEON).

/// IEEE bit patterns the hosts' sequences and their callers share: the f32 sign bit and
/// +inf, f64 1.0, and the quiet NaN [`Lanes::quiet_nan64`] makes of f64 NaN lanes.
pub mod bits {
    pub const SIGN: u32 = 0x8000_0000;
    pub const INF: u32 = 0x7F80_0000;
    pub const ONE64: u64 = 0x3FF0_0000_0000_0000;
    pub const QNAN64: u64 = 0x7FF8_0000_0000_0000;
}

/// Second source of a lane operation: a register, a constant in every lane, or memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src<R, M> {
    /// A register.
    R(R),
    /// A 32-bit constant in every 32-bit lane.
    K(u32),
    /// A 64-bit constant in every 64-bit lane.
    K64(u64),
    /// A whole register's worth of memory.
    M(M),
}

/// How a rounding to an integral value rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// To nearest, ties to even.
    Nearest,
    /// Toward minus infinity.
    Floor,
}

/// The lane operations of one host (or one register width of it). `d` may name any source
/// unless a method says otherwise. Integer operations work on every 32-bit (or 64-bit) lane,
/// float ones follow IEEE binary32 (binary64) in the float environment the code runs with.
/// Compares write all ones to the lanes where they hold and zero elsewhere; "mask" means
/// such a value.
pub trait Lanes {
    /// A vector register.
    type R: Copy + PartialEq + std::fmt::Debug;
    /// A memory operand.
    type Mem: Copy + PartialEq + std::fmt::Debug;
    /// A general-purpose register.
    type Gpr: Copy;
    /// Whether [`Self::trunc_i32`] is Rust's `as i32` already (saturating, NaN 0). When false
    /// it gives `i32::MIN` for NaN and for every lane out of the i32 range (x86-64's
    /// "integer indefinite").
    const TRUNC_SATURATES: bool;

    /// Whether two-source operations write a register other than their first source
    /// without a copy: it decides which of two equivalent orders is shorter.
    fn three_operand(&self) -> bool;

    // ------------------------------------------------------------ constants and moves

    /// `d = a`: a register copy (nothing when `a` is `d`), a constant in every lane or a load.
    fn set(&mut self, d: Self::R, a: Src<Self::R, Self::Mem>);
    /// `d = 0` on integer data (a host with separate integer and float bypass domains keeps
    /// integer chains in the integer one; [`Self::set`] of zero is the float-domain form).
    fn zero(&mut self, d: Self::R);
    /// `d` = the register at `m` (no alignment required).
    fn load(&mut self, d: Self::R, m: Self::Mem);
    /// The register `s` to `m` (no alignment required).
    fn store(&mut self, m: Self::Mem, s: Self::R);
    /// `d` = the 32-bit word at `m` in every lane.
    fn broadcast32(&mut self, d: Self::R, m: Self::Mem);

    // ------------------------------------------------------------ bitwise

    /// `d = a & b` on float data.
    fn and(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a | b` on float data.
    fn or(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a ^ b` on float data.
    fn xor(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = !m & a` on float data. May clobber `m` when `d` is `a` (a two-operand form
    /// writes its first operand).
    fn andn(&mut self, d: Self::R, m: Self::R, a: Src<Self::R, Self::Mem>);
    /// `d = a & b` on integer data (see [`Self::zero`]).
    fn and_int(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a | b` on integer data.
    fn or_int(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a ^ b` on integer data.
    fn xor_int(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = !m & a` on integer data; `m` as for [`Self::andn`].
    fn andn_int(&mut self, d: Self::R, m: Self::R, a: Src<Self::R, Self::Mem>);
    /// `d = m ? a : d` bitwise (`m` a mask). May clobber `m`; `a` must not be `m`.
    fn select(&mut self, d: Self::R, m: Self::R, a: Src<Self::R, Self::Mem>);
    /// `d = m ? b : a` per lane (`m` a mask, kept).
    fn blend(&mut self, d: Self::R, a: Self::R, b: Self::R, m: Self::R);

    // ------------------------------------------------------------ 32-bit integer lanes

    /// `d = a + b`
    fn add32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a - b`
    fn sub32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// Mask of `a == b`.
    fn cmpeq32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// Mask of `a > b`, signed.
    fn cmpgt32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// Mask of `a > k`, unsigned. `d` must differ from `a`.
    fn gt_u32(&mut self, d: Self::R, a: Self::R, k: u32);
    /// `d = max(a, b)`, unsigned.
    fn max_u32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = (a · b) >> 32`, unsigned. May clobber `t`, which must differ from `d`, `a` and
    /// `b`.
    fn mulhi_u32(&mut self, d: Self::R, a: Self::R, b: Self::R, t: [Self::R; 3]);
    /// `d = a << n`
    fn shl32(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d = a >> n`, logical.
    fn shr32(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d = a >> n`, arithmetic.
    fn sar32(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d = a << n` by each lane's count in `n` (0..=32; 32 gives 0).
    fn shl32_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d = a >> n`, logical, by each lane's count in `n` (0..=32; 32 gives 0).
    fn shr32_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d = a >> n`, arithmetic, by each lane's count in `n` (0..=31).
    fn sar32_var(&mut self, d: Self::R, a: Self::R, n: Self::R);

    // ------------------------------------------------------------ f32 lanes

    /// `d` = the host's magnitude key of the f32 lanes of `a`, which [`Self::key_gt`]
    /// compares (the key of one value may be compared several times).
    fn mag(&mut self, d: Self::R, a: Self::R);
    /// Mask of the lanes whose magnitude (key `m`, from [`Self::mag`]) is above the
    /// non-negative f32 bit pattern `k`.
    fn key_gt(&mut self, d: Self::R, m: Self::R, k: u32);
    /// Mask of the lanes of `a` whose magnitude is above `k`.
    fn mag_gt(&mut self, d: Self::R, a: Self::R, k: u32) {
        self.mag(d, a);
        self.key_gt(d, d, k);
    }
    /// `d = a + b`
    fn add_f32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a · b`
    fn mul_f32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a / b`. `d` must differ from `b`.
    fn div_f32(&mut self, d: Self::R, a: Src<Self::R, Self::Mem>, b: Self::R);
    /// `d = d + a · b`, fused (one rounding).
    fn fma_f32(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d = sqrt(a)`
    fn sqrt_f32(&mut self, d: Self::R, a: Self::R);
    /// `d` = `a` rounded to an integral value as `r` says (exact).
    fn round_f32(&mut self, d: Self::R, a: Self::R, r: Round);
    /// `d = a > b ? a : b` (`b` when either is NaN or both are equal). With `b` a register,
    /// `d` must differ from `b`.
    fn max_f32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a < b ? a : b` (`b` when either is NaN or both are equal). With `b` a register,
    /// `d` must differ from `b`.
    fn min_f32(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = max(a, b)` with the host's quickest maximum (NaN lanes unspecified).
    fn max_f32_fast(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = min(a, b)` with the host's quickest minimum (NaN lanes unspecified).
    fn min_f32_fast(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// Mask of `a == b` (false when either is NaN).
    fn eq(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Mask of `a != b` (true when either is NaN).
    fn ne(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Mask of `a < b` (false when either is NaN). `d` must differ from `b`.
    fn lt(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Mask of `a <= b` (false when either is NaN). `d` must differ from `b`.
    fn le(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Mask of the lanes where neither `a` nor `b` is a NaN.
    fn ordered(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Mask of `a >= k`, `k` the bits of an f32 (false when `a` is NaN). `d` must differ
    /// from `a`.
    fn ge_k(&mut self, d: Self::R, a: Self::R, k: u32);
    /// Mask of the lanes of `a` that are -inf.
    fn is_neg_inf(&mut self, d: Self::R, a: Self::R);
    /// `d` = the f32 lanes of `a` as i32, truncated toward zero (out-of-range lanes: see
    /// [`Self::TRUNC_SATURATES`]).
    fn trunc_i32(&mut self, d: Self::R, a: Self::R);

    // ------------------------------------------------------------ f64 lanes

    /// `d` = the low (`hi` false) or high half of the f32 lanes of `a`, as f64.
    fn widen(&mut self, d: Self::R, a: Self::R, hi: bool);
    /// `d` = the f64 lanes of `lo` then `hi`, as f32 (rounded by the float environment).
    /// May clobber `lo` and `hi`; `d` must not be `hi`.
    fn narrow(&mut self, d: Self::R, lo: Self::R, hi: Self::R);
    /// The low half of the f32 lanes of `d` = the f64 lanes of `a` as f32 (the rest of `d`
    /// unspecified).
    fn narrow_lo(&mut self, d: Self::R, a: Self::R);
    /// `d = a + b`
    fn add_f64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a - b`
    fn sub_f64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a · b`
    fn mul_f64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a / b`. `d` must differ from `b` when `a` is not a register.
    fn div_f64(&mut self, d: Self::R, a: Src<Self::R, Self::Mem>, b: Self::R);
    /// `d = sqrt(a)`
    fn sqrt_f64(&mut self, d: Self::R, a: Self::R);
    /// `d` = `a` rounded to an integral value as `r` says (exact).
    fn round_f64(&mut self, d: Self::R, a: Self::R, r: Round);
    /// Mask of `a <= b` (false when either is NaN). `d` must differ from `b`.
    fn le64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Mask of `a < b` (false when either is NaN). `d` must differ from `b`.
    fn lt64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = the f64 lanes of `a` (integral, within i32) as i32, in the form
    /// [`Self::join32`] takes.
    fn cvt_f64_i32(&mut self, d: Self::R, a: Self::R);
    /// `d` = the 32-bit lanes [`Self::cvt_f64_i32`] made of the low half (`lo`), then of the
    /// high half (`hi`). `d` must differ from `hi`.
    fn join32(&mut self, d: Self::R, lo: Self::R, hi: Self::R);
    /// Make the NaN lanes of the f64 lanes of `d` the quiet NaN [`bits::QNAN64`]. Clobbers
    /// `t`.
    fn quiet_nan64(&mut self, d: Self::R, t: Self::R);

    // ------------------------------------------------------------ 64-bit integer lanes

    /// `d` = the low (`hi` false) or high half of the 32-bit lanes of `a`, sign-extended
    /// (`signed`) or zero-extended to 64-bit lanes.
    fn widen32(&mut self, d: Self::R, a: Self::R, hi: bool, signed: bool);
    /// `d = a + b`
    fn add64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a - b`
    fn sub64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d = a << n`
    fn shl64(&mut self, d: Self::R, a: Self::R, n: u32);
    /// `d = a >> n`, logical.
    fn shr64(&mut self, d: Self::R, a: Self::R, n: u32);
    /// Mask of `a > b`, signed.
    fn cmpgt64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// Mask of `a == b`.
    fn cmpeq64(&mut self, d: Self::R, a: Self::R, b: Src<Self::R, Self::Mem>);
    /// `d` = the product of the low 32 bits of each 64-bit lane of `a` and `b`, unsigned, as
    /// 64 bits.
    fn mul_u32_64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// The same, signed.
    fn mul_i32_64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// `d` = the 64-bit products of the low (`hi` false) or high half of the 32-bit lanes of
    /// `a` and `b`, unsigned. May clobber `t`, which must differ from `d`, `a` and `b`.
    fn mul_wide_u32(&mut self, d: Self::R, a: Self::R, b: Self::R, hi: bool, t: [Self::R; 2]);
    /// Per 32-bit lane, the 64-bit `a · b + c (+ cin)` of `[a, b, c]` (unsigned; `cin` 0 or
    /// 1 per lane): its low words into `d[0]`, its high words into `d[1]`. Clobbers `a`, `b`
    /// and `t`; all registers distinct.
    fn mul_add_wide_u32(
        &mut self,
        d: [Self::R; 2],
        s: [Self::R; 3],
        cin: Option<Self::R>,
        t: [Self::R; 3],
    );
    /// `d = a << n` by each lane's count for counts below 64; a lane whose count is 64 or
    /// more (or negative) gets an unspecified value.
    fn shl64_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d = a >> n` (logical), counts as for [`Self::shl64_var`].
    fn shr64_var(&mut self, d: Self::R, a: Self::R, n: Self::R);
    /// `d = a << left` where `left >= 0`, `d = a >> right` where `right >= 0`, with
    /// `right = -left` and `|left| < 64` in every lane where `a` is not zero (a zero lane
    /// gives zero). May clobber `t`, which may be `left`; `d` must differ from `a` and `left`.
    fn shift64(&mut self, d: Self::R, a: Self::R, left: Self::R, right: Self::R, t: Self::R);

    // ------------------------------------------------------------ tables, masks

    /// The read-only table `bytes` (little-endian) in the code's constant area, its base
    /// made ready for [`Self::gather32`] in the host's table register number `slot` (0 or 1;
    /// both stay valid until the other is loaded again).
    fn table(&mut self, slot: usize, bytes: Vec<u8>) -> Self::Gpr;
    /// `d[k]` = the 32-bit word at byte `4 · idx[k] + disp` of the table at `table`, in every
    /// lane. Clobbers `mask`, which must differ from `d` and `idx`.
    fn gather32(&mut self, d: Self::R, table: Self::Gpr, idx: Self::R, disp: i32, mask: Self::R);
    /// `g` non-zero exactly when some lane of the mask `m` is set (on x86-64 bit k is lane
    /// k's sign).
    fn mask_bits(&mut self, g: Self::Gpr, m: Self::R);

    // ------------------------------------------------------------ one vector per register

    /// `d` = the pairwise sums of the f64 lanes, in each 128-bit half: (a0 + a1, b0 + b1).
    fn hadd64(&mut self, d: Self::R, a: Self::R, b: Self::R);
    /// Every f32 lane of `v` = lane 0.
    fn broadcast0(&mut self, v: Self::R);
    /// `d` = `a` with neighbouring f32 lanes swapped (1, 0, 3, 2, ...).
    fn swap_pairs(&mut self, d: Self::R, a: Self::R);
    /// `d` = `a` with its halves swapped.
    fn swap_halves(&mut self, d: Self::R, a: Self::R);
    /// The f32 lanes of `d` whose bit is set in `lanes` (bit 0: lane 0) = those of `a`; the
    /// others keep `d`'s.
    fn blend_lanes(&mut self, d: Self::R, a: Src<Self::R, Self::Mem>, lanes: u8);
}
