//! AArch64 encoding of the THEIA lowering (`lower.rs`).
//!
//! The code is an `extern "C" fn(*mut TheiaCtx) -> u32`. Pinned registers: x19 the context,
//! x20 the step count, x21 the budget (callee-saved, stored by the prologue); scratch 0-7 are
//! x9-x16; x17 and x8 are temporaries of single operations; x1-x3 are the result cache's
//! slots (`lower::Cache`). The code makes no calls.

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use super::ctx::{BUDGET, PC, STEPS};
use super::lower::{Alu, Cond, Emit, Shift, R};
use crate::host::a64::asm::a64;
use dynasmrt::aarch64::Aarch64Relocation;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

const CTX: u8 = 19;
const TMP: u8 = 17;
const TMP2: u8 = 8;
/// The result cache's slots (`lower::Cache`): x1-x3, which nothing else uses.
const CACHE: [u8; 3] = [1, 2, 3];

pub struct A64Emit {
    pub ops: VecAssembler<Aarch64Relocation>,
    epilogue: DynamicLabel,
}

impl A64Emit {
    pub fn new() -> Self {
        let mut ops = VecAssembler::new(0);
        let epilogue = ops.new_dynamic_label();
        A64Emit { ops, epilogue }
    }

    fn bcc(&mut self, c: Cond, l: DynamicLabel) {
        match c {
            Cond::Eq => a64!(self.ops; b.eq =>l),
            Cond::Ne => a64!(self.ops; b.ne =>l),
            Cond::Ugt => a64!(self.ops; b.hi =>l),
            Cond::Slt => a64!(self.ops; b.lt =>l),
            Cond::Sgt => a64!(self.ops; b.gt =>l),
            Cond::Sle => a64!(self.ops; b.le =>l),
            Cond::Sge => a64!(self.ops; b.ge =>l),
        }
    }

    pub fn finish(self) -> Result<Vec<u8>, String> {
        self.ops
            .finalize()
            .map_err(|e| format!("AArch64 assembly: {e:?}"))
    }

    /// `X(d)` = a 64-bit constant, in movz/movk steps.
    fn mov_imm(&mut self, d: u8, v: u64) {
        a64!(self.ops; movz X(d), (v & 0xFFFF) as u32);
        for k in 1..4u32 {
            let part = ((v >> (16 * k)) & 0xFFFF) as u32;
            if part != 0 {
                a64!(self.ops; movk X(d), part, LSL k * 16);
            }
        }
    }
}

impl Default for A64Emit {
    fn default() -> Self {
        Self::new()
    }
}

fn r(n: R) -> u8 {
    9 + n
}

impl Emit for A64Emit {
    type Label = DynamicLabel;

    fn label(&mut self) -> DynamicLabel {
        self.ops.new_dynamic_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        a64!(self.ops; =>l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        a64!(self.ops; b =>l);
    }

    fn load32(&mut self, d: R, off: u32) {
        a64!(self.ops; ldr W(r(d)), [X(CTX), off]);
    }

    fn store32(&mut self, off: u32, s: R) {
        a64!(self.ops; str W(r(s)), [X(CTX), off]);
    }

    fn store32_imm(&mut self, off: u32, v: u32) {
        self.mov_imm(TMP, v as u64);
        a64!(self.ops; str W(TMP), [X(CTX), off]);
    }

    fn imm(&mut self, d: R, v: u64) {
        self.mov_imm(r(d), v);
    }

    fn alu(&mut self, op: Alu, wide: bool, d: R, a: R, b: R) {
        let (a, b, d) = (r(a), r(b), r(d));
        if wide {
            match op {
                Alu::Add => a64!(self.ops; add X(d), X(a), X(b)),
                Alu::Sub => a64!(self.ops; sub X(d), X(a), X(b)),
                Alu::And => a64!(self.ops; and X(d), X(a), X(b)),
                Alu::Or => a64!(self.ops; orr X(d), X(a), X(b)),
                Alu::Xor => a64!(self.ops; eor X(d), X(a), X(b)),
                Alu::Mul => a64!(self.ops; mul X(d), X(a), X(b)),
            }
        } else {
            match op {
                Alu::Add => a64!(self.ops; add W(d), W(a), W(b)),
                Alu::Sub => a64!(self.ops; sub W(d), W(a), W(b)),
                Alu::And => a64!(self.ops; and W(d), W(a), W(b)),
                Alu::Or => a64!(self.ops; orr W(d), W(a), W(b)),
                Alu::Xor => a64!(self.ops; eor W(d), W(a), W(b)),
                Alu::Mul => a64!(self.ops; mul W(d), W(a), W(b)),
            }
        }
    }

    fn add_sign_kept(&mut self, sub: bool, d: R, a: R, b: R) {
        let (a, b, d) = (r(a), r(b), r(d));
        if sub {
            a64!(self.ops; subs W(d), W(a), W(b));
        } else {
            a64!(self.ops; adds W(d), W(a), W(b));
        }
        a64!(self.ops
            ; cset W(TMP), vs
            ; eor W(d), W(d), W(TMP), lsl 31
        );
    }

    fn alu_imm(&mut self, op: Alu, wide: bool, d: R, a: R, v: i32) {
        let (a, d) = (r(a), r(d));
        let k = TMP2;
        if wide {
            self.mov_imm(k, v as i64 as u64);
            match op {
                Alu::Add => a64!(self.ops; add X(d), X(a), X(k)),
                Alu::Sub => a64!(self.ops; sub X(d), X(a), X(k)),
                Alu::And => a64!(self.ops; and X(d), X(a), X(k)),
                Alu::Or => a64!(self.ops; orr X(d), X(a), X(k)),
                Alu::Xor => a64!(self.ops; eor X(d), X(a), X(k)),
                Alu::Mul => a64!(self.ops; mul X(d), X(a), X(k)),
            }
        } else {
            self.mov_imm(k, v as u32 as u64);
            match op {
                Alu::Add => a64!(self.ops; add W(d), W(a), W(k)),
                Alu::Sub => a64!(self.ops; sub W(d), W(a), W(k)),
                Alu::And => a64!(self.ops; and W(d), W(a), W(k)),
                Alu::Or => a64!(self.ops; orr W(d), W(a), W(k)),
                Alu::Xor => a64!(self.ops; eor W(d), W(a), W(k)),
                Alu::Mul => a64!(self.ops; mul W(d), W(a), W(k)),
            }
        }
    }

    fn shift(&mut self, op: Shift, wide: bool, d: R, a: R, n: u8) {
        let (a, d, n) = (r(a), r(d), n as u32);
        if wide {
            match op {
                Shift::Shl => a64!(self.ops; lsl X(d), X(a), n),
                Shift::Shr => a64!(self.ops; lsr X(d), X(a), n),
                Shift::Sar => a64!(self.ops; asr X(d), X(a), n),
            }
        } else {
            match op {
                Shift::Shl => a64!(self.ops; lsl W(d), W(a), n),
                Shift::Shr => a64!(self.ops; lsr W(d), W(a), n),
                Shift::Sar => a64!(self.ops; asr W(d), W(a), n),
            }
        }
    }

    fn sext32(&mut self, d: R, a: R) {
        a64!(self.ops; sxtw X(r(d)), W(r(a)));
    }

    fn udiv(&mut self, d: R, a: R, b: R) {
        a64!(self.ops; udiv X(r(d)), X(r(a)), X(r(b)));
    }

    fn branch(&mut self, c: Cond, wide: bool, a: R, b: R, l: DynamicLabel) {
        if wide {
            a64!(self.ops; cmp X(r(a)), X(r(b)));
        } else {
            a64!(self.ops; cmp W(r(a)), W(r(b)));
        }
        self.bcc(c, l);
    }

    fn branch_imm(&mut self, c: Cond, wide: bool, a: R, v: i32, l: DynamicLabel) {
        if wide {
            self.mov_imm(TMP2, v as i64 as u64);
            a64!(self.ops; cmp X(r(a)), X(TMP2));
        } else {
            self.mov_imm(TMP2, v as u32 as u64);
            a64!(self.ops; cmp W(r(a)), W(TMP2));
        }
        self.bcc(c, l);
    }

    fn branch_mem32_ne(&mut self, off: u32, v: u32, l: DynamicLabel) {
        a64!(self.ops; ldr W(TMP), [X(CTX), off]);
        self.mov_imm(TMP2, v as u64);
        a64!(self.ops
            ; cmp W(TMP), W(TMP2)
            ; b.ne =>l
        );
    }

    fn dec_branch_nz(&mut self, reg: R, l: DynamicLabel) {
        a64!(self.ops
            ; subs X(r(reg)), XSP(r(reg)), 1
            ; b.ne =>l
        );
    }

    fn branch_budget_n(&mut self, n: u32, l: DynamicLabel) {
        self.mov_imm(TMP2, n as u64);
        a64!(self.ops
            ; add X(TMP), x20, X(TMP2)
            ; cmp X(TMP), x21
            ; b.hi =>l
        );
    }

    fn count_steps(&mut self, n: u32) {
        self.mov_imm(TMP2, n as u64);
        a64!(self.ops; add x20, x20, X(TMP2));
    }

    fn store_at(&mut self, wide: bool, base: R, off: u32, s: R) {
        // register-offset form: no alignment requirement on `off`
        self.mov_imm(TMP2, off as u64);
        a64!(self.ops; add X(TMP), X(CTX), X(r(base)));
        if wide {
            a64!(self.ops; str X(r(s)), [X(TMP), X(TMP2)]);
        } else {
            a64!(self.ops; str W(r(s)), [X(TMP), X(TMP2)]);
        }
    }

    fn exit(&mut self, kind: u32) {
        let e = self.epilogue;
        a64!(self.ops; str x20, [X(CTX), STEPS]);
        self.mov_imm(0, kind as u64);
        a64!(self.ops; b =>e);
    }

    fn prologue(&mut self, dispatch: DynamicLabel) {
        a64!(self.ops
            ; stp x19, x20, [sp, -32]!
            ; str x21, [sp, 16]
            ; mov x19, x0
            ; ldr x20, [x19, STEPS]
            ; ldr x21, [x19, BUDGET]
            ; ldr w9, [x19, PC]
            ; b =>dispatch
        );
    }

    fn keep(&mut self, k: u8, s: R) {
        a64!(self.ops; mov W(CACHE[k as usize]), W(r(s)));
    }

    fn restore(&mut self, d: R, k: u8) {
        a64!(self.ops; mov W(r(d)), W(CACHE[k as usize]));
    }

    fn epilogue(&mut self) {
        let e = self.epilogue;
        a64!(self.ops
            ; =>e
            ; ldr x21, [sp, 16]
            ; ldp x19, x20, [sp], 32
            ; ret
        );
    }
}
