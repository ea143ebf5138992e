//! The reference interpreter: the definition of correct execution.
//!
//! Programs are pre-decoded once ([`Interpreter::new`]); [`Interpreter::run`] then executes
//! one invocation against caller-owned [`Registers`] and [`Uniforms`].
//!
//! Behaviour chosen where the hardware hangs or is undocumented (each is tested):
//! * every invocation has an instruction budget; exhausting it is
//!   [`ExecError::BudgetExhausted`] (a runaway loop hangs the GPU);
//! * BREAK/BREAKC with an empty LOOP stack is [`ExecError::BreakWithoutLoop`] (hangs the GPU);
//! * fetching past the last code word is [`ExecError::PcOutOfRange`] (the hardware would run
//!   into whatever program memory holds and wrap around);
//! * an undefined opcode is [`ExecError::UndefinedOpcode`];
//! * END ends the invocation wherever it is, inside CALLs, IFs and LOOPs included;
//! * CMP sets both flags regardless of the destination mask;
//! * aL is one register: a nested loop overwrites it and nothing restores it when the inner
//!   loop ends, so after an inner loop aL holds the inner loop's final value until the outer
//!   loop steps it again;
//! * EMIT and SETEMIT in a vertex shader do nothing;
//! * relative addressing follows the newest revision of the PICA200 documentation: an offset
//!   outside -128..=127 is ignored, the sum is masked with 0x7F, and indices above 95 read
//!   (1,1,1,1) (see [`crate::pica::state::Uniforms`]).

mod flow;
mod predecode;

pub use flow::pc_after;

use crate::pica::float::{self, FloatMode, Rounding};
use crate::pica::program::{Program, ShaderKind};
use crate::pica::state::{EmitBuffer, GeometryState, Registers, Uniforms};
use flow::{CallFrame, IfFrame, LoopFrame, Stacks};
use predecode::{predecode_word, Alu, Dst, Op, Src};
use std::fmt;

const MODE_F24_RTZ: u8 = 0;
const MODE_F24_RNE: u8 = 1;
const MODE_F32: u8 = 2;

/// Default instruction budget per invocation: far above any real shader (a 4096-word
/// program with four nested 256-iteration loops would need more, and is not real).
pub const DEFAULT_BUDGET: u64 = 1 << 20;

/// Why an invocation stopped without reaching END.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// The instruction budget ran out: the program loops forever or runs too long.
    BudgetExhausted { budget: u64, pc: u32 },
    /// BREAK or BREAKC taken with an empty LOOP stack (hangs the GPU).
    BreakWithoutLoop { pc: u32 },
    /// Execution reached an address with no code word.
    PcOutOfRange { pc: u32, words: u32 },
    /// An undefined opcode was executed.
    UndefinedOpcode { pc: u32, word: u32 },
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::BudgetExhausted { budget, pc } => write!(
                f,
                "instruction budget of {budget} exhausted at 0x{pc:03x} (runaway loop?)"
            ),
            ExecError::BreakWithoutLoop { pc } => write!(
                f,
                "BREAK at 0x{pc:03x} with an empty loop stack (the hardware hangs)"
            ),
            ExecError::PcOutOfRange { pc, words } => write!(
                f,
                "execution ran past the end of the program: address 0x{pc:03x}, program has {words} words"
            ),
            ExecError::UndefinedOpcode { pc, word } => write!(
                f,
                "undefined opcode 0x{:02x} at 0x{pc:03x} (word 0x{word:08x})",
                word >> 26
            ),
        }
    }
}

impl std::error::Error for ExecError {}

/// What a finished invocation reports besides the register contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RunInfo {
    /// Instructions executed, END included.
    pub instructions: u64,
}

/// A pre-decoded program ready to run.
#[derive(Clone, Debug)]
pub struct Interpreter {
    /// Each instruction with whether the address after it can end a stack frame: some CALL,
    /// IF or LOOP of the program pushes a frame ending there (see
    /// [`flow::Stacks::next_pc`]). After an instruction whose successor is no such address,
    /// and which did not BREAK, no stack can act, so the run loop skips them.
    ops: Vec<(Op, bool)>,
    entry: u32,
    kind: ShaderKind,
    mode: FloatMode,
    max_rule: float::MaxRule,
}

impl Interpreter {
    /// Pre-decode `program` for execution in float mode `mode`.
    pub fn new(program: &Program, mode: FloatMode) -> Interpreter {
        let ops: Vec<Op> = program
            .code()
            .iter()
            .map(|&w| predecode_word(w, program))
            .collect();
        let mut ends = vec![false; ops.len() + 1];
        for op in &ops {
            // The frame ends as `flow` computes them; addresses past the code are never a
            // next PC, so they need no entry.
            let end = match *op {
                Op::Call { dest, num }
                | Op::CallC { dest, num, .. }
                | Op::CallU { dest, num, .. } => dest as usize + num as usize,
                Op::IfC { dest, .. } | Op::IfU { dest, .. } => dest as usize,
                Op::Loop { dest, .. } => dest as usize + 1,
                _ => continue,
            };
            if let Some(e) = ends.get_mut(end) {
                *e = true;
            }
        }
        Interpreter {
            ops: ops.into_iter().zip(ends.into_iter().skip(1)).collect(),
            entry: program.entry() as u32,
            kind: program.kind(),
            mode,
            max_rule: float::MaxRule::default(),
        }
    }

    /// Bytes this interpreter holds on the heap (its pre-decoded program): what a cache of
    /// prepared programs counts against its budget.
    pub fn heap_bytes(&self) -> usize {
        self.ops.capacity() * std::mem::size_of::<(Op, bool)>()
    }

    /// [`Self::new`] with the MAX reading `max_rule` (see [`float::MaxRule`]).
    pub fn with_max_rule(
        program: &Program,
        mode: FloatMode,
        max_rule: float::MaxRule,
    ) -> Interpreter {
        Interpreter {
            max_rule,
            ..Interpreter::new(program, mode)
        }
    }

    /// The MAX reading this interpreter implements.
    pub fn max_rule(&self) -> float::MaxRule {
        self.max_rule
    }

    /// The float mode this interpreter computes in.
    pub fn mode(&self) -> FloatMode {
        self.mode
    }

    /// Run one point-mode geometry-shader invocation per row of `inputs`, as a GPU does for a
    /// draw: v0-v15 := the row, everything else (registers, output banks, vertex buffer,
    /// SETEMIT state) carried over from the previous invocation, and b15 of `uniforms` set
    /// after each invocation (also after one that fails). Emitted vertices go to `out`,
    /// after the records `geometry` had pending (see [`GeometryState::drain_into`]).
    ///
    /// Returns the instructions executed, or the index of the invocation that failed and
    /// its error (vertices it emitted before failing are in `out`).
    pub fn run_points(
        &self,
        regs: &mut Registers,
        uniforms: &mut Uniforms,
        geometry: &mut GeometryState,
        inputs: &[[[f32; 4]; 16]],
        budget: u64,
        out: &mut EmitBuffer,
    ) -> Result<u64, (usize, ExecError)> {
        // Records collect in `geometry` (after those pending from before) and are drained
        // at the end, on an error, or whenever `DRAIN_EVERY` have collected: a drain also
        // copies the four slots, too much to do after every invocation.
        const DRAIN_EVERY: usize = 64;
        let mut instructions = 0;
        for (k, input) in inputs.iter().enumerate() {
            regs.input = *input;
            let r = self.run(regs, uniforms, Some(geometry), budget);
            uniforms.set_bool(15, true);
            match r {
                Ok(info) => instructions += info.instructions,
                Err(e) => {
                    geometry.drain_into(out);
                    return Err((k, e));
                }
            }
            if geometry.emitted.len() >= DRAIN_EVERY {
                geometry.drain_into(out);
            }
        }
        geometry.drain_into(out);
        Ok(instructions)
    }

    /// Run one invocation from the entry point. Registers are used as they are (callers
    /// reset them for vertex shaders, keep them for geometry shaders); `geometry` receives
    /// EMITs and must be given for geometry shaders to emit anything.
    pub fn run(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        geometry: Option<&mut GeometryState>,
        budget: u64,
    ) -> Result<RunInfo, ExecError> {
        // One copy of the loop per float mode: with the mode a constant, the float model's
        // rounding parameters fold into the arithmetic instead of being looked up per lane.
        match self.mode {
            FloatMode::F24(Rounding::TowardZero) => {
                self.run_in::<MODE_F24_RTZ>(regs, uniforms, geometry, budget)
            }
            FloatMode::F24(Rounding::NearestEven) => {
                self.run_in::<MODE_F24_RNE>(regs, uniforms, geometry, budget)
            }
            FloatMode::F32 => self.run_in::<MODE_F32>(regs, uniforms, geometry, budget),
        }
    }

    #[inline(never)]
    fn run_in<const MODE: u8>(
        &self,
        regs: &mut Registers,
        uniforms: &Uniforms,
        mut geometry: Option<&mut GeometryState>,
        budget: u64,
    ) -> Result<RunInfo, ExecError> {
        let mode = match MODE {
            MODE_F24_RTZ => FloatMode::F24(Rounding::TowardZero),
            MODE_F24_RNE => FloatMode::F24(Rounding::NearestEven),
            _ => FloatMode::F32,
        };
        let mut stacks = Stacks::default();
        let mut pc = self.entry;
        let mut executed: u64 = 0;
        let mut offs = rel_offsets(regs);
        loop {
            let Some((op, next_can_end)) = self.ops.get(pc as usize) else {
                return Err(ExecError::PcOutOfRange {
                    pc,
                    words: self.ops.len() as u32,
                });
            };
            if executed == budget {
                return Err(ExecError::BudgetExhausted { budget, pc });
            }
            executed += 1;
            let mut jump = None;
            let mut broke = false;
            match op {
                Op::Dp4 { dst, a, b } => {
                    let (a, b) = read2(regs, &offs, uniforms, a, b);
                    write(regs, dst, [float::fast::dp4(a, b, mode); 4]);
                }
                Op::Dp3 { dst, a, b } => {
                    let (a, b) = read2(regs, &offs, uniforms, a, b);
                    write(regs, dst, [float::fast::dp3(a, b, mode); 4]);
                }
                Op::Dph { dst, a, b } => {
                    let (a, b) = read2(regs, &offs, uniforms, a, b);
                    write(regs, dst, [float::fast::dph(a, b, mode); 4]);
                }
                Op::Mul { dst, a, b } => {
                    let (a, b) = read2(regs, &offs, uniforms, a, b);
                    let r = float::fast::mul4(a, b, dst.mask, mode);
                    write(regs, dst, r);
                }
                Op::Add { dst, a, b } => {
                    let (a, b) = read2(regs, &offs, uniforms, a, b);
                    let r = float::fast::add4(a, b, dst.mask, mode);
                    write(regs, dst, r);
                }
                Op::Mad { dst, a, b, c } => {
                    let (a, b) = read2(regs, &offs, uniforms, a, b);
                    let c = read(regs, &offs, uniforms, c);
                    let r = float::fast::mad4(a, b, c, dst.mask, mode);
                    write(regs, dst, r);
                }
                Op::Mov { dst, a } => {
                    let a = read(regs, &offs, uniforms, a);
                    write(regs, dst, a);
                }
                Op::Alu2 { alu, dst, a, b } => {
                    let a = read(regs, &offs, uniforms, a);
                    let b = read(regs, &offs, uniforms, b);
                    alu2(regs, *alu, dst, a, b, mode, self.max_rule);
                }
                Op::Alu1 { alu, dst, a } => {
                    let a = read(regs, &offs, uniforms, a);
                    alu1(regs, *alu, dst, a, mode);
                }
                Op::Mova { a, mask } => {
                    let a = read(regs, &offs, uniforms, a);
                    for l in 0..2 {
                        if mask[l] {
                            regs.a0[l] = float::mova(a[l]);
                        }
                    }
                    offs = rel_offsets(regs);
                }
                Op::Cmp { a, b, x, y } => {
                    let a = read(regs, &offs, uniforms, a);
                    let b = read(regs, &offs, uniforms, b);
                    regs.cmp = [x.eval(a[0], b[0]) as u8, y.eval(a[1], b[1]) as u8];
                }
                Op::Nop => {}
                Op::End => {
                    return Ok(RunInfo {
                        instructions: executed,
                    })
                }
                Op::Break => {
                    jump = Some(break_loop(&mut stacks, pc)?);
                    broke = true;
                }
                &Op::BreakC(cond) => {
                    if cond.eval(regs.cmp[0] != 0, regs.cmp[1] != 0) {
                        jump = Some(break_loop(&mut stacks, pc)?);
                        broke = true;
                    }
                }
                Op::Emit => {
                    if let (ShaderKind::Geometry, Some(gs)) = (self.kind, geometry.as_deref_mut()) {
                        gs.emit(&regs.output);
                        std::mem::swap(&mut regs.output, &mut gs.other_bank);
                    }
                }
                &Op::SetEmit {
                    vtx,
                    primitive,
                    winding,
                } => {
                    if let (ShaderKind::Geometry, Some(gs)) = (self.kind, geometry.as_deref_mut()) {
                        gs.vertex_id = vtx;
                        gs.primitive = primitive;
                        gs.winding = winding;
                    }
                }
                &Op::Call { dest, num } => jump = Some(call(&mut stacks, pc, dest, num)),
                &Op::CallC { cond, dest, num } => {
                    if cond.eval(regs.cmp[0] != 0, regs.cmp[1] != 0) {
                        jump = Some(call(&mut stacks, pc, dest, num));
                    }
                }
                &Op::CallU { b, dest, num } => {
                    if uniforms.bool(b as usize) {
                        jump = Some(call(&mut stacks, pc, dest, num));
                    }
                }
                &Op::IfC { cond, dest, num } => {
                    let taken = cond.eval(regs.cmp[0] != 0, regs.cmp[1] != 0);
                    jump = if_block(&mut stacks, taken, dest, num);
                }
                &Op::IfU { b, dest, num } => {
                    jump = if_block(&mut stacks, uniforms.bool(b as usize), dest, num);
                }
                &Op::Loop { i, dest } => {
                    let [count, start, step, _] = uniforms.int(i as usize);
                    regs.al = start as i32;
                    stacks.loops.push(LoopFrame {
                        end: dest as u32 + 1,
                        start: pc + 1,
                        remaining: count as u32,
                        step: step as i32,
                    });
                    offs = rel_offsets(regs);
                }
                &Op::JmpC { cond, dest } => {
                    if cond.eval(regs.cmp[0] != 0, regs.cmp[1] != 0) {
                        jump = Some(dest as u32);
                    }
                }
                &Op::JmpU { b, dest, invert } => {
                    if uniforms.bool(b as usize) != invert {
                        jump = Some(dest as u32);
                    }
                }
                &Op::Undefined(word) => return Err(ExecError::UndefinedOpcode { pc, word }),
            }
            pc = if stacks.is_empty() || !(broke || *next_can_end) {
                jump.unwrap_or(pc + 1)
            } else {
                let next = stacks.next_pc(pc, jump, broke, &mut regs.al);
                // A loop end steps aL.
                offs[3] = rel_offsets(regs)[3];
                next
            };
        }
    }
}

fn break_loop(stacks: &mut Stacks, pc: u32) -> Result<u32, ExecError> {
    match stacks.loops.pop() {
        Some(frame) => Ok(frame.end),
        None => Err(ExecError::BreakWithoutLoop { pc }),
    }
}

fn call(stacks: &mut Stacks, pc: u32, dest: u16, num: u8) -> u32 {
    stacks.call.push(CallFrame {
        end: dest as u32 + num as u32,
        ret: pc + 1,
    });
    dest as u32
}

fn if_block(stacks: &mut Stacks, taken: bool, dest: u16, num: u8) -> Option<u32> {
    if taken {
        stacks.ifs.push(IfFrame {
            end: dest as u32,
            target: dest as u32 + num as u32,
        });
        None
    } else {
        Some(dest as u32)
    }
}

/// The offsets a source's `rel` selects (none, a0.x, a0.y, aL) after the offset rule of seed
/// 000 (outside -128..=127 ignored). The run loop keeps a copy, refreshed whenever a0 or aL
/// may have changed, instead of building it at every read.
#[inline(always)]
fn rel_offsets(regs: &Registers) -> [i32; 4] {
    let rule = |o: i32| if (-128..=127).contains(&o) { o } else { 0 };
    [0, rule(regs.a0[0]), rule(regs.a0[1]), rule(regs.al)]
}

/// Reads a source operand: bank, relative address (`offs`, see [`rel_offsets`]), swizzle and
/// negation, without a branch on any of them (operand kinds vary from one instruction to the
/// next, so branches on them are mispredicted).
#[inline(always)]
fn read(regs: &Registers, offs: &[i32; 4], uniforms: &Uniforms, src: &Src) -> [f32; 4] {
    let index =
        (src.index as i32).wrapping_add(offs[src.rel as usize & 3]) as usize & src.wrap as usize;
    let banks: [&[[f32; 4]]; 3] = [&regs.input, &regs.temp, uniforms.float_table()];
    // Lane by lane from the row, not a copy of it: a 16-byte load of a row whose lanes were
    // just stored one by one waits for the stores (store-forwarding stall).
    let row = &banks[src.bank as usize][index];
    let s = src.swizzle;
    // Negation flips the sign bit and nothing else, so -0 and -NaN patterns appear.
    let lane = |l: usize| f32::from_bits(row[s[l] as usize & 3].to_bits() ^ src.neg);
    [lane(0), lane(1), lane(2), lane(3)]
}

/// [`read`] of two sources, in order.
#[inline(always)]
fn read2(
    regs: &Registers,
    offs: &[i32; 4],
    uniforms: &Uniforms,
    a: &Src,
    b: &Src,
) -> ([f32; 4], [f32; 4]) {
    (read(regs, offs, uniforms, a), read(regs, offs, uniforms, b))
}

/// Store the masked lanes. The register is rewritten whole (a blend) rather than lane by
/// lane so that the next read of it is not a store-forwarding stall.
#[inline(always)]
fn write(regs: &mut Registers, dst: &Dst, value: [f32; 4]) {
    let reg = if dst.output {
        &mut regs.output[dst.index as usize & 15]
    } else {
        &mut regs.temp[dst.index as usize & 15]
    };
    let old = *reg;
    let m = dst.mask;
    *reg = [
        if m[0] { value[0] } else { old[0] },
        if m[1] { value[1] } else { old[1] },
        if m[2] { value[2] } else { old[2] },
        if m[3] { value[3] } else { old[3] },
    ];
}

/// Every lane, for operations cheaper than a mispredicted branch on the mask (the store
/// keeps only the masked lanes).
#[inline(always)]
fn all_lanes(f: impl Fn(usize) -> f32) -> [f32; 4] {
    [f(0), f(1), f(2), f(3)]
}

/// Only the lanes the mask keeps are computed: most shader instructions write one or two
/// lanes, and the float model's rounding costs more than the branch.
#[inline(always)]
fn lanewise(dst: &Dst, f: impl Fn(usize) -> f32) -> [f32; 4] {
    let mut r = [0.0; 4];
    for (l, out) in r.iter_mut().enumerate() {
        if dst.mask[l] {
            *out = f(l);
        }
    }
    r
}

#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "one ALU step's operands")]
fn alu2(
    regs: &mut Registers,
    alu: Alu,
    dst: &Dst,
    a: [f32; 4],
    b: [f32; 4],
    m: FloatMode,
    max_rule: float::MaxRule,
) {
    let r = match alu {
        Alu::Add => lanewise(dst, |l| float::fast::add(a[l], b[l], m)),
        Alu::Mul => lanewise(dst, |l| float::fast::mul(a[l], b[l], m)),
        Alu::Max => all_lanes(|l| float::max_rule(a[l], b[l], max_rule)),
        Alu::Min => all_lanes(|l| float::min(a[l], b[l])),
        Alu::Sge => all_lanes(|l| float::sge(a[l], b[l])),
        Alu::Slt => all_lanes(|l| float::slt(a[l], b[l])),
        Alu::Dp3 => [float::fast::dp3(a, b, m); 4],
        Alu::Dp4 => [float::fast::dp4(a, b, m); 4],
        Alu::Dph => [float::fast::dph(a, b, m); 4],
        Alu::Dst => float::dst(a, b, m),
        #[cfg(feature = "made-up-opcode")]
        Alu::Sub => lanewise(dst, |l| float::fast::add(a[l], -b[l], m)),
        // One-source operations never reach here (the pre-decoder routes them to alu1).
        _ => return,
    };
    write(regs, dst, r);
}

#[inline(always)]
fn alu1(regs: &mut Registers, alu: Alu, dst: &Dst, a: [f32; 4], m: FloatMode) {
    let r = match alu {
        Alu::Mov => a,
        Alu::Flr => lanewise(dst, |l| float::flr(a[l], m)),
        Alu::Rcp => [float::rcp(a[0], m); 4],
        Alu::Rsq => [float::rsq(a[0], m); 4],
        Alu::Ex2 => [float::ex2(a[0], m); 4],
        Alu::Lg2 => [float::lg2(a[0], m); 4],
        Alu::Litp => {
            let (v, x, y) = float::litp(a);
            regs.cmp = [x as u8, y as u8];
            v
        }
        // Two-source operations never reach here.
        _ => return,
    };
    write(regs, dst, r);
}
