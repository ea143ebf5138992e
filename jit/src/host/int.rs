//! The integer macro-assembler: one trait, [`IntMasm`], over the general-purpose registers of
//! a host, implemented once per host (`x64/int.rs`, `a64/int.rs`). Code generators that work
//! on integers (PICA's integer-only EX2/LG2, THEIA's fixed-point lowering) are written once
//! over it.
//!
//! Methods are named for what they compute, not for an instruction: a host picks its own
//! sequence (x86-64's two-operand forms with a copy where the destination is not the first
//! source, AArch64's three-operand forms and immediate fields), so callers never assemble
//! host-specific sequences themselves. Operations that have no single instruction on some
//! host but are one operation to their callers (a counted-loop step, the sign-exact 32-bit
//! sum) are methods too, so that each host lowers the whole of them.
//!
//! # Conventions
//!
//! * Values are 64-bit registers. A [`Size::S32`] operation reads the low 32 bits of its
//!   operands and zero-extends its 32-bit result into the register, on every host.
//! * An immediate ([`RegImm::I`]) is an `i64`; a 32-bit operation uses its low 32 bits, a
//!   64-bit one all of it.
//! * Constants that no instruction field takes, and the few sequences that need a temporary,
//!   use the implementation's scratch register(s), which the caller names when it builds the
//!   masm. The caller never passes them as operands, except as the destination of a
//!   [`IntMasm::mov_imm`] whose value leaves the generated code at once (a status in the
//!   return register, which on x86-64 may be the scratch register).
//! * The destination may be any source unless a method says otherwise.
//! * Flags: [`IntMasm::jcc`] reads the condition set by the last [`IntMasm::cmp`],
//!   [`IntMasm::cmp_mem`] or [`IntMasm::test_bit`]; only other `jcc`s may come between. Every
//!   other method may change the flags.

/// Operand width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// 32 bits (the result zero-extended to 64).
    S32,
    /// 64 bits.
    S64,
}

/// Second operand: a register or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegImm<R> {
    /// A register.
    R(R),
    /// A constant (its low 32 bits for a 32-bit operation).
    I(i64),
}

/// Conditions [`IntMasm::jcc`] tests after a comparison `a` against `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `a == b` (after [`IntMasm::test_bit`]: the bit is clear).
    Eq,
    /// `a != b` (after [`IntMasm::test_bit`]: the bit is set).
    Ne,
    /// Unsigned `a < b`.
    Lo,
    /// Unsigned `a <= b`.
    Ls,
    /// Unsigned `a > b`.
    Hi,
    /// Unsigned `a >= b`.
    Hs,
    /// Signed `a < b`.
    Lt,
    /// Signed `a <= b`.
    Le,
    /// Signed `a > b`.
    Gt,
    /// Signed `a >= b`.
    Ge,
}

/// Binary operations of [`IntMasm::alu`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alu {
    /// `a + b` (wrapping).
    Add,
    /// `a - b` (wrapping).
    Sub,
    /// `a & b`.
    And,
    /// `a | b`.
    Or,
    /// `a ^ b`.
    Xor,
    /// The low bits of `a · b`.
    Mul,
}

/// Shifts of [`IntMasm::shift`] and [`IntMasm::shift_var`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    /// Left.
    Shl,
    /// Right, logical.
    Shr,
    /// Right, arithmetic.
    Sar,
}

/// The integer macro-assembler of one host (see the module documentation for the operand
/// conventions).
pub trait IntMasm {
    /// A general-purpose register.
    type Reg: Copy + PartialEq + std::fmt::Debug;
    /// A code label.
    type Label: Copy;
    /// The host's entry frame (`abi::Frame`: which callee-saved registers a generated
    /// function saves, its stack space, where its context pointer goes).
    type Frame;

    /// The entry of a generated function `fn(*mut Ctx) -> u32`: saves and allocates what
    /// `frame` says and copies the context pointer (the first argument) where it says.
    fn enter(&mut self, frame: &Self::Frame);
    /// The return: restores what [`IntMasm::enter`] saved and returns the status (the host
    /// ABI's return register, `abi::RET`).
    fn ret(&mut self, frame: &Self::Frame);

    /// A new unbound label.
    fn label(&mut self) -> Self::Label;
    /// Binds `l` to the current position.
    fn bind(&mut self, l: Self::Label);
    /// Jumps to `l`.
    fn jump(&mut self, l: Self::Label);
    /// Jumps to `l` if `c` holds for the last comparison.
    fn jcc(&mut self, c: Cond, l: Self::Label);
    /// Compares `a` with `b`.
    fn cmp(&mut self, size: Size, a: Self::Reg, b: RegImm<Self::Reg>);
    /// Compares the value at `[base + off]` with `b`.
    fn cmp_mem(&mut self, size: Size, base: Self::Reg, off: i32, b: RegImm<Self::Reg>);
    /// Sets the condition for [`Cond::Eq`] to mean bit `bit` (0..64) of `a` is clear.
    fn test_bit(&mut self, a: Self::Reg, bit: u32);
    /// Compares `a` with `b` and jumps to `l` if `c` holds.
    fn branch(&mut self, c: Cond, size: Size, a: Self::Reg, b: RegImm<Self::Reg>, l: Self::Label) {
        self.cmp(size, a, b);
        self.jcc(c, l);
    }
    /// `r -= 1`, then jumps to `l` unless `r` is zero: a counted loop's step.
    fn dec_branch_nz(&mut self, size: Size, r: Self::Reg, l: Self::Label);

    /// `d = k` (all 64 bits).
    fn mov_imm(&mut self, d: Self::Reg, k: i64);
    /// `d = a` (a 32-bit move zero-extends, also when `d` is `a`).
    fn mov(&mut self, size: Size, d: Self::Reg, a: Self::Reg);
    /// `d` = the low 32 bits of `a`, sign-extended to 64.
    fn sext32(&mut self, d: Self::Reg, a: Self::Reg);
    /// `d = a op b`.
    fn alu(&mut self, op: Alu, size: Size, d: Self::Reg, a: Self::Reg, b: RegImm<Self::Reg>);
    /// `d = -a`.
    fn neg(&mut self, size: Size, d: Self::Reg, a: Self::Reg);
    /// `d = a shifted by n` (`n` below the width).
    fn shift(&mut self, op: Shift, size: Size, d: Self::Reg, a: Self::Reg, n: u32);
    /// `d = a shifted by the register n` (its value below the width). x86-64 takes the count
    /// only from rcx: there `n` must be rcx and `d` must not be.
    fn shift_var(&mut self, op: Shift, size: Size, d: Self::Reg, a: Self::Reg, n: Self::Reg);
    /// `d` = the `width` bits of `a` from bit `lsb` (`lsb + width` within the size),
    /// zero-extended.
    fn ubfx(&mut self, size: Size, d: Self::Reg, a: Self::Reg, lsb: u32, width: u32);
    /// `d` = the number of leading zero bits of the non-zero 64-bit `a`, and `h = 63 - d` (the
    /// index of its highest set bit); `d`, `h` and `a` differ.
    fn clz(&mut self, d: Self::Reg, h: Self::Reg, a: Self::Reg);
    /// `d = min(a, b)`, unsigned.
    fn umin(&mut self, size: Size, d: Self::Reg, a: Self::Reg, b: Self::Reg);
    /// `d = a / b`, unsigned (`b` not zero). Every other register keeps its value; on x86-64
    /// `b` must not be rax or rdx.
    fn udiv(&mut self, size: Size, d: Self::Reg, a: Self::Reg, b: Self::Reg);
    /// `d` = the 32-bit `a + b` (`a - b` if `sub`) with bit 31 replaced by the sign of the
    /// exact result: the wrapped result with bit 31 flipped when the signed operation
    /// overflows.
    fn add32_sign_exact(&mut self, sub: bool, d: Self::Reg, a: Self::Reg, b: Self::Reg);

    /// `d` = the value at `[base + off]` (a 32-bit load zero-extends).
    fn load(&mut self, size: Size, d: Self::Reg, base: Self::Reg, off: i32);
    /// Stores `s` (its low 32 bits for [`Size::S32`]) at `[base + off]`.
    fn store(&mut self, size: Size, base: Self::Reg, off: i32, s: Self::Reg);
    /// Stores the constant `k` at `[base + off]`.
    fn store_imm(&mut self, size: Size, base: Self::Reg, off: i32, k: i64);
    /// Stores `s` at `[base + index + off]` (any alignment).
    fn store_idx(&mut self, size: Size, base: Self::Reg, index: Self::Reg, off: i32, s: Self::Reg);

    /// A read-only table of the little-endian `bytes` after the code (16-aligned; equal
    /// tables are emitted once).
    fn table(&mut self, bytes: Vec<u8>) -> Self::Label;
    /// `d` = entry `idx` of the table of 32-bit (zero-extended) or 64-bit entries at `table`.
    fn load_table(&mut self, size: Size, d: Self::Reg, table: Self::Label, idx: Self::Reg);
    /// `d += ` entry `idx` of the table at `table`.
    fn add_table(&mut self, size: Size, d: Self::Reg, table: Self::Label, idx: Self::Reg);
}

/// `$a.$f64(args)` for a 64-bit operation, `$a.$f32(args)` for a 32-bit one: the two forms of
/// one instruction in a host's typed assembler.
macro_rules! by_size {
    ($size:expr, $a:expr, $f64:ident / $f32:ident ($($arg:expr),* $(,)?)) => {
        match $size {
            $crate::host::int::Size::S64 => $a.$f64($($arg),*),
            $crate::host::int::Size::S32 => $a.$f32($($arg),*),
        }
    };
}
pub(crate) use by_size;

/// The members of an [`IntMasm`] implementation that delegate to the host's typed assembler
/// (its field `a`) and frame (`abi::Frame`) the same way on every host; `$jump` is the
/// assembler's unconditional jump.
macro_rules! delegate_to_asm {
    ($jump:ident) => {
        type Reg = Gpr;
        type Label = DynamicLabel;
        type Frame = Frame<'static>;

        fn enter(&mut self, frame: &Frame) {
            frame.enter(self.a);
        }

        fn ret(&mut self, frame: &Frame) {
            frame.ret(self.a);
        }

        fn label(&mut self) -> DynamicLabel {
            self.a.new_label()
        }

        fn bind(&mut self, l: DynamicLabel) {
            self.a.bind(l);
        }

        fn jump(&mut self, l: DynamicLabel) {
            self.a.$jump(l);
        }

        fn table(&mut self, bytes: Vec<u8>) -> DynamicLabel {
            self.a.table(bytes)
        }
    };
}
pub(crate) use delegate_to_asm;

// Its only clients so far are behind the made-up-isa feature.
#[cfg_attr(not(feature = "made-up-isa"), allow(dead_code))]
pub mod leaf;

#[cfg(test)]
mod tests;
