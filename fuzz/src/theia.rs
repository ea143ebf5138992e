//! The `theia` fuzz target: bytes become a THEIA program, an initial state, an entry and a
//! budget; the interpreter and every JIT backend that can run here (x86-64 natively, AArch64
//! under the emulator with the `a64` feature) run it in the chosen profile, and any
//! difference in outcome, error, registers, result flops, return address or I/O panics.
//!
//! Format (zeros once the bytes run out): header u8 (bit 0: manual profile; bits 1-3:
//! budget 0, 1, 3, 10, 50, 200, 1000, 5000), count u8 (1 + count % 40 instructions), entry
//! u8 (% count), then per instruction an operation byte (an index into the table, or above
//! its length an undefined code from the next byte), three field bytes (register choices, or
//! targets relative to the instruction for jumps) and, for immediate forms, four immediate
//! bytes; then initial register values, 4 bytes per component, filling R1-R12, C1-C7 and
//! the rows after them in turn.

use picajit::interp::theia::exec::{run, Code, Io, State, IMEM_BIT};
use picajit::interp::theia::table::{Form, OPS};
use picajit::interp::theia::{Profile, Word};
use picajit::jit::theia::compile;
use picajit::jit::Backend;

struct Bytes<'a>(&'a [u8]);
impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct LogIo(Vec<(bool, [u32; 3], [u32; 3])>);
impl Io for LogIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        self.0.push((false, addr, data));
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        let v = [addr[2], addr[0].wrapping_add(1), addr[1] ^ 0xFFFF];
        self.0.push((true, addr, v));
        v
    }
}

/// A register field from one byte: user and constant registers mostly, other banks, the
/// output aliases, 7-bit aliases and addresses beyond the manual profile's.
fn reg(b: u8) -> u16 {
    match b >> 5 {
        0 => b as u16 & 31,
        1 => 32 + (b as u16 & 31),
        2..=4 => 64 + (b as u16 & 31) % 19,
        5 => 96 + (b as u16 & 31),
        6 => 128 + (b as u16 & 3),
        _ => 0x80 + 64 + (b as u16 & 31) + (b as u16 & 1) * 200,
    }
}

/// The decoded case.
pub struct TheiaCase {
    pub profile: Profile,
    pub code: Code,
    pub init: State,
    pub entry: u16,
    pub budget: u64,
}

impl TheiaCase {
    pub fn decode(data: &[u8]) -> TheiaCase {
        let mut b = Bytes(data);
        let h = b.u8();
        let profile = if h & 1 != 0 {
            Profile::Manual
        } else {
            Profile::Rtl
        };
        let budget = [0, 1, 3, 10, 50, 200, 1000, 5000][(h >> 1) as usize & 7];
        let n = 1 + b.u8() as usize % 40;
        let entry = IMEM_BIT + (b.u8() as usize % n) as u16;
        let mut words = Vec::with_capacity(n);
        for i in 0..n {
            let sel = b.u8() as usize;
            let (f0, f1, f2) = (b.u8(), b.u8(), b.u8());
            let w = if sel >= OPS.len() {
                Word::new(0x100 | b.u8() as u16, reg(f0), reg(f1), reg(f2))
            } else {
                let info = &OPS[sel];
                let target = IMEM_BIT.wrapping_add((i as i32 + f0 as i8 as i32 / 8) as u16);
                match info.form {
                    Form::CondJump => Word::new(info.code, target, reg(f1), reg(f2)),
                    Form::ImmJump => Word::with_imm(info.code, target, b.u32() & (f1 as u32)),
                    Form::Imm | Form::Swizzle | Form::Return => {
                        let imm = b.u32();
                        let imm = if info.form == Form::Swizzle {
                            imm % 24
                        } else {
                            imm
                        };
                        Word::with_imm(info.code, if f1 & 1 == 0 { reg(f0) } else { 0 }, imm)
                    }
                    Form::Reg3 => Word::new(info.code, reg(f0), reg(f1), reg(f2)),
                }
            };
            words.push(w.encode());
        }
        let mut init = State::new(profile);
        let rows = init.regs.len();
        'fill: for k in 0..rows {
            let row = (64 + k) % rows;
            for c in 0..3 {
                if b.0.is_empty() {
                    break 'fill;
                }
                init.regs[row][c] = b.u32();
            }
        }
        TheiaCase {
            profile,
            code: Code::imem(words),
            init,
            entry,
            budget,
        }
    }
}

fn backends() -> Vec<Backend> {
    let mut v = vec![];
    if Backend::host() == Some(Backend::X64) {
        v.push(Backend::X64);
    }
    if Backend::host() == Some(Backend::A64) || cfg!(feature = "a64") {
        v.push(Backend::A64);
    }
    v
}

/// Runs the case everywhere; panics on any difference.
pub fn differential(c: &TheiaCase) {
    let mut want_state = c.init.clone();
    let mut want_io = LogIo::default();
    let want = run(
        c.profile,
        &c.code,
        &mut want_state,
        &mut want_io,
        c.entry,
        c.budget,
    )
    .map_err(picajit::jit::Error::Theia);
    for b in backends() {
        let compiled = compile(&c.code, c.profile, b, &[c.entry]).expect("THEIA code compiles");
        let mut st = c.init.clone();
        let mut io = LogIo::default();
        let got = compiled.run(&mut st, &mut io, c.entry, c.budget);
        assert_eq!(got, want, "{b} outcome");
        assert_eq!(st, want_state, "{b} state");
        assert_eq!(io, want_io, "{b} I/O");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random byte strings through the target's own decoder and check.
    #[test]
    fn random_cases_agree() {
        let mut rng = picajit_testkit::XorShift(0x0123_4567_89AB_CDEF);
        for _ in 0..300 {
            let len = (rng.0 % 400) as usize;
            let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            differential(&TheiaCase::decode(&data));
        }
    }
}
