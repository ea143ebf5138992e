//! The THEIA reference interpreter: one instruction at a time, in either profile.
//!
//! Code addresses are 16 bits: bit 15 set selects the instruction memory loaded by the host
//! (`IMEM`, row `addr & 0x7FFF`; the `.mem` file's entry-point table is its first rows), bit 15
//! clear the ROM of default code (`Unit_MEM.v`, "Instruction memory" and the selector flops).
//! A run starts at an address, executes until RETURN, and stops early at the step budget or at
//! an operation the profile never completes (status [`Status::Stalled`]: the RTL's execution
//! FSM waits forever for such an ALU result). Operation codes that no source defines and
//! fetches outside the loaded code are errors.

use super::arith::{self, ONE, SCALE};
use super::codec::Word;
use super::table::{self, Component, RtlSupport, Sem, RTL_SWIZZLES, SWIZZLES};
use super::Profile;
use std::fmt;

/// Code as the execution unit sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Code {
    /// Instruction memory rows, addressed as `0x8000 | row`.
    pub imem: Vec<u64>,
    /// Default-code ROM rows, addressed as `row` (below 0x8000). Empty unless the caller loads
    /// the RTL's ROM contents.
    pub rom: Vec<u64>,
}

/// Bit 15 of a code address selects the instruction memory.
pub const IMEM_BIT: u16 = 0x8000;

impl Code {
    /// Code with only an instruction memory.
    pub fn imem(imem: Vec<u64>) -> Self {
        Code {
            imem,
            rom: Vec::new(),
        }
    }

    /// The word at a code address, if it is loaded.
    pub fn fetch(&self, addr: u16) -> Option<u64> {
        if addr & IMEM_BIT != 0 {
            self.imem.get((addr & !IMEM_BIT) as usize).copied()
        } else {
            self.rom.get(addr as usize).copied()
        }
    }
}

/// The unit's state: the register file and what the pipeline carries from one instruction to
/// the next (and from one run to the next).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// One row per register address the profile defines (x, y, z).
    pub regs: Vec<[u32; 3]>,
    /// The ALU's result flops (`Module_VectorALU.v` lines 98-117): the last completed
    /// instruction's result, written back or not. They are not reset between runs.
    pub last_result: [u32; 3],
    /// The return-address register of CALL/RET (`Module_InstructionFetch.v`, `rReturnAddress`).
    pub return_addr: u16,
}

impl State {
    /// All registers zero, as the CLI starts.
    pub fn new(profile: Profile) -> Self {
        State {
            regs: vec![[0; 3]; profile.register_count()],
            last_result: [0; 3],
            return_addr: 0,
        }
    }
}

/// The IO side of OMWRITE and TMREAD.
pub trait Io {
    /// OMWRITE: the output-memory address vector (source 1) and data (source 2).
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]);
    /// TMREAD: the texture-memory word at the address vector (source 1).
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3];
}

/// An [`Io`] that records output writes and answers texture reads with zeros.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordIo {
    pub omem_writes: Vec<([u32; 3], [u32; 3])>,
    pub tmem_reads: Vec<[u32; 3]>,
}

impl Io for RecordIo {
    fn omem_write(&mut self, addr: [u32; 3], data: [u32; 3]) {
        self.omem_writes.push((addr, data));
    }
    fn tmem_read(&mut self, addr: [u32; 3]) -> [u32; 3] {
        self.tmem_reads.push(addr);
        [0; 3]
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// RETURN executed; the value is instruction bit 0, what the RTL hands the control unit
    /// (`Module_InstructionFetch.v`, `oMicroCodeReturnValue`).
    Returned(bool),
    /// The step budget ran out before the instruction at `pc`.
    Budget { pc: u16 },
    /// The instruction at `pc` never completes in this profile, or (rtl) it is a RETURN
    /// that executed but that the unit never reports as done (the run's first instruction,
    /// or the one a RET returned to: see [`step`]).
    Stalled { pc: u16, op: u16 },
}

/// The outcome of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    pub status: Status,
    /// Executed instructions, RETURN included (an operation that never completes is not
    /// counted; a RETURN that executed and never reports done is).
    pub steps: u64,
}

/// Why a run could not go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TheiaError {
    /// No source defines this operation code.
    UndefinedOperation { pc: u16, op: u16 },
    /// A jump, call or return went to an address with no loaded code.
    JumpOutOfRange { pc: u16, target: u16 },
    /// Execution ran past the loaded code (or started outside it).
    PcOutOfRange { pc: u16 },
    /// The manual profile has no register at this address (0-131 exist).
    RegisterOutOfRange { pc: u16, addr: u16 },
}

impl fmt::Display for TheiaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TheiaError::UndefinedOperation { pc, op } => write!(
                f,
                "undefined THEIA operation {op:#06x} at address {pc:#06x}"
            ),
            TheiaError::JumpOutOfRange { pc, target } => write!(
                f,
                "jump at address {pc:#06x} to {target:#06x}, where no code is loaded"
            ),
            TheiaError::PcOutOfRange { pc } => {
                write!(f, "execution reached address {pc:#06x}, where no code is loaded")
            }
            TheiaError::RegisterOutOfRange { pc, addr } => write!(
                f,
                "register address {addr} at address {pc:#06x} does not exist in the manual profile (0-131)"
            ),
        }
    }
}

impl std::error::Error for TheiaError {}

fn comp(v: [u32; 3], c: Component) -> u32 {
    v[c as usize]
}

/// Where a run stands between two instructions: what the next one needs besides the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The next instruction's code address.
    pub pc: u16,
    /// The previous instruction's destination field (forwarding compares it).
    pub last_dst: u16,
    /// Instructions executed so far.
    pub steps: u64,
    /// Set after a jump, so that a fetch outside the code names the jump.
    pub jumped_from: Option<u16>,
    /// rtl: the row the previous instruction wrote and its value before that write. The write
    /// lands in the clock edge in which the next instruction's operands are read from the
    /// register file, so that instruction reads the old value through any address other than
    /// the forwarded one (an alias: the rows decode address bits 6:0 only).
    pub stale: Option<(usize, [u32; 3])>,
}

impl Cursor {
    /// A run starting at `entry`: in the `rtl` profile the previous destination field is 0
    /// (the trigger resets it: `Unit_EXE.v` line 193, `Module_ExecutionFSM.v` lines 250-257).
    pub fn start(entry: u16) -> Self {
        Cursor {
            pc: entry,
            last_dst: 0,
            steps: 0,
            jumped_from: None,
            stale: None,
        }
    }
}

/// Runs from `entry` until RETURN, the budget or a stall. `state.last_result` carries over
/// from the previous run.
pub fn run(
    profile: Profile,
    code: &Code,
    state: &mut State,
    io: &mut dyn Io,
    entry: u16,
    budget: u64,
) -> Result<RunOutcome, TheiaError> {
    let mut cur = Cursor::start(entry);
    loop {
        if let Some(out) = step(profile, code, state, io, &mut cur, budget)? {
            return Ok(out);
        }
    }
}

/// Executes the instruction at `cur.pc`, or ends the run: `Some` when the run is over
/// (RETURN executed, the budget exhausted before this instruction, or a stall).
pub fn step(
    profile: Profile,
    code: &Code,
    state: &mut State,
    io: &mut dyn Io,
    cur: &mut Cursor,
    budget: u64,
) -> Result<Option<RunOutcome>, TheiaError> {
    assert_eq!(
        state.regs.len(),
        profile.register_count(),
        "state made for another profile"
    );
    let pc = cur.pc;
    let raw = match code.fetch(pc) {
        Some(raw) => raw,
        None => {
            return Err(match cur.jumped_from {
                Some(from) => TheiaError::JumpOutOfRange {
                    pc: from,
                    target: pc,
                },
                None => TheiaError::PcOutOfRange { pc },
            })
        }
    };
    let w = Word::decode(raw);
    let info = table::by_code(w.op).ok_or(TheiaError::UndefinedOperation { pc, op: w.op })?;
    if !completes(profile, info.sem, info.rtl) {
        // the fetch unit presents the next word while the unit waits (see below for CALL)
        if profile == Profile::Rtl && op_at(code, pc.wrapping_add(1)) == Some(Sem::Call) {
            state.return_addr = pc.wrapping_add(2);
        }
        return Ok(Some(RunOutcome {
            status: Status::Stalled { pc, op: w.op },
            steps: cur.steps,
        }));
    }
    if cur.steps >= budget {
        return Ok(Some(RunOutcome {
            status: Status::Budget { pc },
            steps: cur.steps,
        }));
    }
    // rtl: the return-address register takes the fetch unit's pointer + 1 at each rising
    // edge of "the presented word is a CALL" (`rtl/Module_InstructionFetch.v`: `always @
    // (posedge IsCall) rReturnAddress <= oIP+1`), whether that CALL executes or not:
    // * The word after an instruction is presented while it executes unless it takes a
    //   branch; for RET (whose return takes effect two clocks later) that is before the RET
    //   reads the register: RET at R followed by CALL returns to R + 2.
    // * A CALL reached by fallthrough, at the run's start or by a return: its address + 1.
    // * A CALL that a taken jump at J presents: the pointer is still J + 1, so J + 2.
    // * No edge when the word presented before was a CALL too: a CALL whose target is a
    //   CALL, a return to a CALL from a RET followed by CALL.
    let rtl = profile == Profile::Rtl;
    let ret_then_call = op_at(code, pc.wrapping_add(1)) == Some(Sem::Call);
    if rtl && info.sem == Sem::Ret && ret_then_call {
        state.return_addr = pc.wrapping_add(2);
    }
    let ra_before = state.return_addr;
    let call_ra = (rtl && info.sem == Sem::Call).then(|| {
        match cur.jumped_from.map(|j| (j, op_at(code, j))) {
            None => Some(pc.wrapping_add(1)),
            Some((_, Some(Sem::Call))) => None,
            Some((j, Some(Sem::Ret))) => {
                (op_at(code, j.wrapping_add(1)) != Some(Sem::Call)).then_some(pc.wrapping_add(1))
            }
            Some((j, _)) => Some(j.wrapping_add(2)),
        }
        .unwrap_or(ra_before)
    });
    let prev = Prev {
        last_dst: cur.last_dst,
        stale: cur.stale,
    };
    let st = execute(profile, state, io, w, info.sem, pc, prev)?;
    if let Some(ra) = call_ra {
        state.return_addr = ra;
    }
    let first = cur.steps == 0;
    cur.steps += 1;
    cur.stale = st.wrote;
    cur.last_dst = w.dst;
    state.last_result = st.result;
    if let Some(r) = st.returned {
        if profile == Profile::Rtl && (first || after_ret(code, cur.jumped_from)) {
            // The fetch unit signals the end when an instruction completes while it presents
            // RETURN (`rtl/Module_InstructionFetch.v`, `oExecutionDone = wLastInstruction &
            // iEXEDone`): the one before RETURN, or a taken jump to it. A RETURN that starts
            // the run or follows a RET executes (and writes) with the fetch unit already past
            // it, and then nothing completes again: the unit never reports done. The fetch
            // unit presents the two words after it meanwhile (a CALL among them sets the
            // return address, see above).
            if op_at(code, pc.wrapping_add(1)) == Some(Sem::Call) {
                state.return_addr = pc.wrapping_add(2);
            } else if op_at(code, pc.wrapping_add(2)) == Some(Sem::Call) {
                state.return_addr = pc.wrapping_add(3);
            }
            return Ok(Some(RunOutcome {
                status: Status::Stalled { pc, op: w.op },
                steps: cur.steps,
            }));
        }
        return Ok(Some(RunOutcome {
            status: Status::Returned(r),
            steps: cur.steps,
        }));
    }
    if profile == Profile::Rtl && info.sem == Sem::Ret {
        // The fetch unit still presents the word after the RET when the RET completes (the
        // return address takes effect two clocks later: `rtl/Module_InstructionFetch.v`,
        // `wSubReturnDelay2`). If that word is RETURN, the unit reports done there, with that
        // RETURN's value. (It then goes on executing from the return address until the
        // control unit's next trigger resets it; that tail is not modelled.)
        if let Some(v) = return_at(code, pc.wrapping_add(1)) {
            return Ok(Some(RunOutcome {
                status: Status::Returned(v),
                steps: cur.steps,
            }));
        }
    }
    match st.next {
        Some(t) => {
            cur.jumped_from = Some(pc);
            cur.pc = t;
        }
        None => {
            cur.jumped_from = None;
            cur.pc = pc.wrapping_add(1);
        }
    }
    Ok(None)
}

/// The operation of the word at `addr`, if there is a defined one.
fn op_at(code: &Code, addr: u16) -> Option<Sem> {
    Some(Word::decode(code.fetch(addr)?).info()?.sem)
}

/// The value of the RETURN at `addr`, if the word there is one.
pub fn return_at(code: &Code, addr: u16) -> Option<bool> {
    let w = Word::decode(code.fetch(addr)?);
    (w.info()?.sem == Sem::Return).then_some(w.imm() & 1 != 0)
}

/// Whether the instruction that jumped to the current one was a RET.
fn after_ret(code: &Code, jumped_from: Option<u16>) -> bool {
    jumped_from.and_then(|f| op_at(code, f)) == Some(Sem::Ret)
}

/// Whether an operation completes in a profile. The manual documents INTP, RESCALE and
/// XCHANGEY/Z, which the RTL's ALU never completes.
pub fn completes(profile: Profile, sem: Sem, rtl: RtlSupport) -> bool {
    match profile {
        Profile::Rtl => rtl == RtlSupport::Completes,
        Profile::Manual => {
            rtl == RtlSupport::Completes
                || matches!(
                    sem,
                    Sem::IntP | Sem::Rescale | Sem::XchangeY | Sem::XchangeZ
                )
        }
    }
}

/// What one instruction did.
pub struct Step {
    /// The ALU result (what the result flops hold afterwards).
    pub result: [u32; 3],
    /// A taken jump's target.
    pub next: Option<u16>,
    /// RETURN's value.
    pub returned: Option<bool>,
    /// rtl: the register row written and its previous value (see [`Cursor::stale`]).
    pub wrote: Option<(usize, [u32; 3])>,
}

/// Reads a register as instruction `pc` sees it.
fn read(
    profile: Profile,
    state: &State,
    addr: u16,
    last_dst: u16,
    stale: Option<(usize, [u32; 3])>,
    pc: u16,
) -> Result<[u32; 3], TheiaError> {
    match profile {
        // Data forwarding (`Module_InstructionDecode.v` lines 65-69, 139-153): a source whose
        // 16-bit address equals the previous instruction's destination field takes the ALU's
        // result flops, whether or not that result was written. Another address of the row
        // the previous instruction wrote reads the row as it was before (see `Cursor::stale`).
        Profile::Rtl => {
            let row = (addr & 0x7F) as usize;
            Ok(match stale {
                _ if addr == last_dst => state.last_result,
                Some((r, old)) if r == row => old,
                _ => state.regs[row],
            })
        }
        Profile::Manual => state
            .regs
            .get(addr as usize)
            .copied()
            .ok_or(TheiaError::RegisterOutOfRange { pc, addr }),
    }
}

/// Writes a register as the profile's memory map allows (see [`Profile::writable`]); returns
/// the row written and its previous value.
fn write(
    profile: Profile,
    state: &mut State,
    addr: u16,
    value: [u32; 3],
    pc: u16,
) -> Result<Option<(usize, [u32; 3])>, TheiaError> {
    let row = profile
        .row(addr)
        .ok_or(TheiaError::RegisterOutOfRange { pc, addr })?;
    Ok(profile
        .writable(row)
        .then(|| (row, std::mem::replace(&mut state.regs[row], value))))
}

/// What the previous instruction leaves for the next one's operand reads (rtl): its
/// destination field (forwarding) and the row it wrote with the row's old value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prev {
    pub last_dst: u16,
    pub stale: Option<(usize, [u32; 3])>,
}

/// Executes one instruction whose operation completes in `profile`.
pub fn execute(
    profile: Profile,
    state: &mut State,
    io: &mut dyn Io,
    w: Word,
    sem: Sem,
    pc: u16,
    prev: Prev,
) -> Result<Step, TheiaError> {
    let Prev { last_dst, stale } = prev;
    let rtl = profile == Profile::Rtl;
    // Source roles (`Module_ExecutionFSM.v` lines 104-110): ALU channel A is source 1 (or the
    // immediate in x), channel B source 2 (or the destination's current value).
    let a = || -> Result<[u32; 3], TheiaError> {
        if w.is_imm() {
            Ok([w.imm(), 0, 0])
        } else {
            read(profile, state, w.src1, last_dst, stale, pc)
        }
    };
    let b = || -> Result<[u32; 3], TheiaError> {
        read(
            profile,
            state,
            if w.is_imm() { w.dst } else { w.src2 },
            last_dst,
            stale,
            pc,
        )
    };
    let add = |x: u32, y: u32| {
        if rtl {
            arith::add_rtl(x, y)
        } else {
            x.wrapping_add(y)
        }
    };
    let sub = |x: u32, y: u32| {
        if rtl {
            arith::sub_rtl(x, y)
        } else {
            x.wrapping_sub(y)
        }
    };
    let narrow = |s: u64| {
        if rtl {
            arith::sign_low31(s)
        } else {
            s as u32
        }
    };
    let map2 = |x: [u32; 3], y: [u32; 3], f: &dyn Fn(u32, u32) -> u32| {
        [f(x[0], y[0]), f(x[1], y[1]), f(x[2], y[2])]
    };
    let mut next = None;
    let mut returned = None;
    let mut writes = true;
    let result: [u32; 3] = match sem {
        Sem::Nop | Sem::DebugPrint => {
            writes = false;
            [0; 3]
        }
        Sem::Add => map2(a()?, b()?, &add),
        Sem::Sub => map2(a()?, b()?, &sub),
        Sem::Inc => a()?.map(|x| add(x, ONE)),
        Sem::Dec => a()?.map(|x| sub(x, ONE)),
        Sem::IncX | Sem::IncY | Sem::IncZ => {
            let i = match sem {
                Sem::IncX => 0,
                Sem::IncY => 1,
                _ => 2,
            };
            let mut v = a()?;
            // Every component goes through an adder (the others add 0), so the RTL's sign
            // handling applies to all three (`Module_VectorALU.v` lines 706-707, 818-819, 852-853).
            for (k, c) in v.iter_mut().enumerate() {
                *c = add(*c, if k == i { ONE } else { 0 });
            }
            v
        }
        Sem::Div => map2(a()?, b()?, &arith::div_rtl),
        Sem::Mul => map2(a()?, b()?, &|x, y| arith::mul_rtl(x, y, false) as u32),
        Sem::IMul => map2(a()?, b()?, &|x, y| arith::mul_rtl(x, y, true) as u32),
        Sem::Mag => [arith::mag_rtl(a()?); 3],
        Sem::Dot => [narrow(arith::dot_sum(a()?, b()?)); 3],
        Sem::Cross => arith::cross_sums(a()?, b()?).map(narrow),
        Sem::Copy => a()?,
        Sem::Zero => [0; 3],
        Sem::MulP => {
            let v = a()?;
            let z = arith::mul_rtl(v[0], v[1], false) as u32;
            if rtl {
                [v[0], v[1], z]
            } else {
                let d = read(profile, state, w.dst, last_dst, stale, pc)?;
                [d[0], d[1], z]
            }
        }
        // S1 & (S2 - 1.0): the adders subtract ONE from source 2 (`Module_VectorALU.v` lines
        // 691, 709, 908-910).
        Sem::Mod => map2(a()?, b()?, &|x, y| x & y.wrapping_sub(ONE)),
        Sem::Frac => a()?.map(|x| x & (ONE - 1)),
        Sem::IntP => a()?.map(|x| x & !(ONE - 1)),
        Sem::Neg => a()?.map(u32::wrapping_neg),
        Sem::XchangeX => {
            let (x, y) = (a()?, b()?);
            [y[0], x[1], x[2]]
        }
        Sem::XchangeY => {
            let (x, y) = (a()?, b()?);
            [x[0], y[1], x[2]]
        }
        Sem::XchangeZ => {
            let (x, y) = (a()?, b()?);
            [x[0], x[1], y[2]]
        }
        Sem::Unscale => a()?.map(|x| {
            if rtl {
                x >> SCALE
            } else {
                ((x as i32) >> SCALE) as u32
            }
        }),
        Sem::Rescale => a()?.map(|x| x << SCALE),
        Sem::OmWrite => {
            io.omem_write(a()?, b()?);
            [0; 3]
        }
        Sem::TmRead => io.tmem_read(a()?),
        // The ALU reads the fetch unit's instruction pointer (`rtl/Unit_EXE.v`, `iCurrentIP`),
        // which has moved to the next instruction by the time LEA executes: the whole-program
        // RTL differential (`tests/theia_rtl.rs`) shows address + 1.
        Sem::Lea => [u32::from(pc.wrapping_add(1)); 3],
        Sem::Return => {
            returned = Some(w.imm() & 1 != 0);
            // The RTL writes the immediate to the destination (usually row 0, which the unit
            // cannot write); the manual describes no write.
            writes = rtl;
            [w.imm(); 3]
        }
        Sem::SetX => {
            let d = b()?;
            [w.imm(), d[1], d[2]]
        }
        Sem::SetY => {
            let d = b()?;
            [d[0], w.imm(), d[2]]
        }
        Sem::SetZ => {
            let d = b()?;
            [d[0], d[1], w.imm()]
        }
        Sem::Swizzle3D => {
            let d = b()?;
            let imm = w.imm();
            let known = if rtl {
                RTL_SWIZZLES.contains(&imm)
            } else {
                (imm as usize) < SWIZZLES.len()
            };
            if known {
                SWIZZLES[imm as usize].1.map(|c| comp(d, c))
            } else {
                [0; 3]
            }
        }
        Sem::Jump(c, t) => {
            writes = false;
            let (x, y) = (comp(a()?, c), comp(b()?, c));
            let taken = if rtl {
                arith::compare_rtl(x, y, t)
            } else {
                arith::compare_manual(x, y, t)
            };
            if taken {
                next = Some(w.dst);
            }
            [0; 3]
        }
        Sem::Jmp => {
            writes = false;
            next = Some(w.dst);
            [0; 3]
        }
        Sem::Call => {
            writes = false;
            state.return_addr = pc.wrapping_add(1);
            next = Some(w.dst);
            [0; 3]
        }
        Sem::Ret => {
            // The ALU computes SETX's result (`Module_VectorALU.v` lines 943, 985, 1032) but a
            // taken branch never writes back (`Module_ExecutionFSM.v` line 98): only the next
            // instruction sees it, through forwarding.
            writes = false;
            next = Some(state.return_addr);
            let d = b()?;
            [w.imm(), d[1], d[2]]
        }
    };
    let wrote = if writes {
        write(profile, state, w.dst, result, pc)?
    } else {
        None
    };
    Ok(Step {
        result,
        next,
        returned,
        wrote: wrote.filter(|_| rtl),
    })
}
