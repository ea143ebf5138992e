//! x86-64 encoding of the THEIA lowering (`lower.rs`): general-purpose integer instructions
//! only (no vector forms, so none of the dynasm immediate-form traps apply).
//!
//! The code is an `extern "sysv64" fn(*mut TheiaCtx) -> u32`. Pinned registers: rbx the
//! context, r12 the step count, r13 the budget; scratch 0-7 are r8, r9, r10, r11, rsi, r14,
//! r15, rbp; rax is the temporary of single operations (rdx:rax for `div`); rcx, rdi and
//! rdx are the result cache's slots (`lower::Cache`). The prologue pushes the six
//! callee-saved registers it uses.

#![allow(
    clippy::useless_conversion,
    reason = "dynasm expands dynamic register operands with `.into()`"
)]

use super::ctx::{BUDGET, PC, STEPS};
use super::lower::{Alu, Cond, Emit, Shift, R};
use crate::host::x64::asm::x64;
use dynasmrt::x64::X64Relocation;
use dynasmrt::{DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

const SCRATCH: [u8; 8] = [8, 9, 10, 11, 6, 14, 15, 5];
const CTX: u8 = 3; // rbx
/// The result cache's slots (`lower::Cache`): rcx, rdi, rdx (caller-saved; rdx saved
/// around `div`).
const CACHE: [u8; 3] = [1, 7, 2];
const RAX: u8 = 0;

pub struct X64Emit {
    pub ops: VecAssembler<X64Relocation>,
    epilogue: DynamicLabel,
}

impl X64Emit {
    pub fn new() -> Self {
        let mut ops = VecAssembler::new(0);
        let epilogue = ops.new_dynamic_label();
        X64Emit { ops, epilogue }
    }

    fn jcc(&mut self, c: Cond, l: DynamicLabel) {
        match c {
            Cond::Eq => x64!(self.ops; je =>l),
            Cond::Ne => x64!(self.ops; jne =>l),
            Cond::Ugt => x64!(self.ops; ja =>l),
            Cond::Slt => x64!(self.ops; jl =>l),
            Cond::Sgt => x64!(self.ops; jg =>l),
            Cond::Sle => x64!(self.ops; jle =>l),
            Cond::Sge => x64!(self.ops; jge =>l),
        }
    }

    pub fn finish(self) -> Result<Vec<u8>, String> {
        self.ops
            .finalize()
            .map_err(|e| format!("x86-64 assembly: {e:?}"))
    }
}

impl Default for X64Emit {
    fn default() -> Self {
        Self::new()
    }
}

fn r(n: R) -> u8 {
    SCRATCH[n as usize]
}

impl Emit for X64Emit {
    type Label = DynamicLabel;

    fn label(&mut self) -> DynamicLabel {
        self.ops.new_dynamic_label()
    }

    fn bind(&mut self, l: DynamicLabel) {
        x64!(self.ops; =>l);
    }

    fn jump(&mut self, l: DynamicLabel) {
        x64!(self.ops; jmp =>l);
    }

    fn load32(&mut self, d: R, off: u32) {
        x64!(self.ops; mov Rd(r(d)), DWORD [Rq(CTX) + off as i32]);
    }

    fn store32(&mut self, off: u32, s: R) {
        x64!(self.ops; mov DWORD [Rq(CTX) + off as i32], Rd(r(s)));
    }

    fn store32_imm(&mut self, off: u32, v: u32) {
        x64!(self.ops; mov DWORD [Rq(CTX) + off as i32], v as i32);
    }

    fn imm(&mut self, d: R, v: u64) {
        if v <= u32::MAX as u64 {
            x64!(self.ops; mov Rd(r(d)), v as i32);
        } else {
            x64!(self.ops; mov Rq(r(d)), QWORD v as i64);
        }
    }

    fn alu(&mut self, op: Alu, wide: bool, d: R, a: R, b: R) {
        let (a, b, d) = (r(a), r(b), r(d));
        let commutes = !matches!(op, Alu::Sub);
        // Two-operand forms: compute in `d` when that leaves `b` intact, else through rax.
        let (dst, src) = if d == a {
            (d, b)
        } else if d != b {
            if wide {
                x64!(self.ops; mov Rq(d), Rq(a));
            } else {
                x64!(self.ops; mov Rd(d), Rd(a));
            }
            (d, b)
        } else if commutes {
            (d, a)
        } else {
            if wide {
                x64!(self.ops; mov rax, Rq(a));
            } else {
                x64!(self.ops; mov eax, Rd(a));
            }
            (RAX, b)
        };
        if wide {
            match op {
                Alu::Add => x64!(self.ops; add Rq(dst), Rq(src)),
                Alu::Sub => x64!(self.ops; sub Rq(dst), Rq(src)),
                Alu::And => x64!(self.ops; and Rq(dst), Rq(src)),
                Alu::Or => x64!(self.ops; or Rq(dst), Rq(src)),
                Alu::Xor => x64!(self.ops; xor Rq(dst), Rq(src)),
                Alu::Mul => x64!(self.ops; imul Rq(dst), Rq(src)),
            }
        } else {
            match op {
                Alu::Add => x64!(self.ops; add Rd(dst), Rd(src)),
                Alu::Sub => x64!(self.ops; sub Rd(dst), Rd(src)),
                Alu::And => x64!(self.ops; and Rd(dst), Rd(src)),
                Alu::Or => x64!(self.ops; or Rd(dst), Rd(src)),
                Alu::Xor => x64!(self.ops; xor Rd(dst), Rd(src)),
                Alu::Mul => x64!(self.ops; imul Rd(dst), Rd(src)),
            }
        }
        if dst != d {
            if wide {
                x64!(self.ops; mov Rq(d), rax);
            } else {
                x64!(self.ops; mov Rd(d), eax);
            }
        }
    }

    fn add_sign_kept(&mut self, sub: bool, d: R, a: R, b: R) {
        let (a, b, d) = (r(a), r(b), r(d));
        x64!(self.ops; mov eax, Rd(a));
        if sub {
            x64!(self.ops; sub eax, Rd(b));
        } else {
            x64!(self.ops; add eax, Rd(b));
        }
        // overflow is rare: a branch costs less than materialising the flag
        x64!(self.ops
            ; jno >ok
            ; xor eax, 0x8000_0000u32 as i32
            ; ok:
            ; mov Rd(d), eax
        );
    }

    fn alu_imm(&mut self, op: Alu, wide: bool, d: R, a: R, v: i32) {
        let (a, d) = (r(a), r(d));
        if op == Alu::Mul {
            if wide {
                x64!(self.ops; imul Rq(d), Rq(a), v);
            } else {
                x64!(self.ops; imul Rd(d), Rd(a), v);
            }
            return;
        }
        if wide {
            if d != a {
                x64!(self.ops; mov Rq(d), Rq(a));
            }
            match op {
                Alu::Add => x64!(self.ops; add Rq(d), v),
                Alu::Sub => x64!(self.ops; sub Rq(d), v),
                Alu::And => x64!(self.ops; and Rq(d), v),
                Alu::Or => x64!(self.ops; or Rq(d), v),
                Alu::Xor => x64!(self.ops; xor Rq(d), v),
                Alu::Mul => unreachable!(),
            }
        } else {
            if d != a {
                x64!(self.ops; mov Rd(d), Rd(a));
            }
            match op {
                Alu::Add => x64!(self.ops; add Rd(d), v),
                Alu::Sub => x64!(self.ops; sub Rd(d), v),
                Alu::And => x64!(self.ops; and Rd(d), v),
                Alu::Or => x64!(self.ops; or Rd(d), v),
                Alu::Xor => x64!(self.ops; xor Rd(d), v),
                Alu::Mul => unreachable!(),
            }
        }
    }

    fn shift(&mut self, op: Shift, wide: bool, d: R, a: R, n: u8) {
        let (a, d) = (r(a), r(d));
        let n = n as i8;
        if wide {
            if d != a {
                x64!(self.ops; mov Rq(d), Rq(a));
            }
            match op {
                Shift::Shl => x64!(self.ops; shl Rq(d), n),
                Shift::Shr => x64!(self.ops; shr Rq(d), n),
                Shift::Sar => x64!(self.ops; sar Rq(d), n),
            }
        } else {
            if d != a {
                x64!(self.ops; mov Rd(d), Rd(a));
            }
            match op {
                Shift::Shl => x64!(self.ops; shl Rd(d), n),
                Shift::Shr => x64!(self.ops; shr Rd(d), n),
                Shift::Sar => x64!(self.ops; sar Rd(d), n),
            }
        }
    }

    fn sext32(&mut self, d: R, a: R) {
        x64!(self.ops; movsxd Rq(r(d)), Rd(r(a)));
    }

    fn udiv(&mut self, d: R, a: R, b: R) {
        // rdx is cache slot 2 (`keep`): saved around the division, which writes it
        x64!(self.ops
            ; push rdx
            ; mov rax, Rq(r(a))
            ; xor edx, edx
            ; div Rq(r(b))
            ; mov Rq(r(d)), rax
            ; pop rdx
        );
    }

    fn branch(&mut self, c: Cond, wide: bool, a: R, b: R, l: DynamicLabel) {
        if wide {
            x64!(self.ops; cmp Rq(r(a)), Rq(r(b)));
        } else {
            x64!(self.ops; cmp Rd(r(a)), Rd(r(b)));
        }
        self.jcc(c, l);
    }

    fn branch_imm(&mut self, c: Cond, wide: bool, a: R, v: i32, l: DynamicLabel) {
        if wide {
            x64!(self.ops; cmp Rq(r(a)), v);
        } else {
            x64!(self.ops; cmp Rd(r(a)), v);
        }
        self.jcc(c, l);
    }

    fn branch_mem32_ne(&mut self, off: u32, v: u32, l: DynamicLabel) {
        x64!(self.ops
            ; cmp DWORD [Rq(CTX) + off as i32], v as i32
            ; jne =>l
        );
    }

    fn dec_branch_nz(&mut self, reg: R, l: DynamicLabel) {
        x64!(self.ops
            ; sub Rq(r(reg)), 1
            ; jnz =>l
        );
    }

    fn branch_budget_n(&mut self, n: u32, l: DynamicLabel) {
        x64!(self.ops
            ; lea rax, [r12 + n as i32]
            ; cmp rax, r13
            ; ja =>l
        );
    }

    fn count_steps(&mut self, n: u32) {
        x64!(self.ops; add r12, n as i32);
    }

    fn store_at(&mut self, wide: bool, base: R, off: u32, s: R) {
        if wide {
            x64!(self.ops; mov QWORD [Rq(CTX) + Rq(r(base)) + off as i32], Rq(r(s)));
        } else {
            x64!(self.ops; mov DWORD [Rq(CTX) + Rq(r(base)) + off as i32], Rd(r(s)));
        }
    }

    fn exit(&mut self, kind: u32) {
        let e = self.epilogue;
        x64!(self.ops
            ; mov QWORD [Rq(CTX) + STEPS as i32], r12
            ; mov eax, kind as i32
            ; jmp =>e
        );
    }

    fn prologue(&mut self, dispatch: DynamicLabel) {
        x64!(self.ops
            ; push rbx
            ; push rbp
            ; push r12
            ; push r13
            ; push r14
            ; push r15
            ; mov rbx, rdi
            ; mov r12, QWORD [rbx + STEPS as i32]
            ; mov r13, QWORD [rbx + BUDGET as i32]
            ; mov r8d, DWORD [rbx + PC as i32]
            ; jmp =>dispatch
        );
    }

    fn keep(&mut self, k: u8, s: R) {
        x64!(self.ops; mov Rd(CACHE[k as usize]), Rd(r(s)));
    }

    fn restore(&mut self, d: R, k: u8) {
        x64!(self.ops; mov Rd(r(d)), Rd(CACHE[k as usize]));
    }

    fn epilogue(&mut self) {
        let e = self.epilogue;
        x64!(self.ops
            ; =>e
            ; pop r15
            ; pop r14
            ; pop r13
            ; pop r12
            ; pop rbp
            ; pop rbx
            ; ret
        );
    }
}
