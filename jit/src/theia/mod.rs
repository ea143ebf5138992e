//! THEIA JIT: the instruction and ROM memories compiled to one host function per program, on
//! the shared host layer (`crate::host`: the integer macro-assembler, frames, the runtime's
//! W^X mapping, native call and AArch64 under the emulator).
//!
//! * `lower.rs` turns each THEIA instruction into integer operations of the host's
//!   macro-assembler (`crate::host::int`; the arithmetic recipes are those of
//!   `picajit_interp::theia::arith`, the multiplier in its closed form `mul_rtl_closed`);
//! * `x64.rs` and `a64.rs` give THEIA's register roles and entry frame on each host;
//! * [`TheiaCompiled::run`] calls the code, hands the OMWRITE requests the code queued to
//!   the I/O side, performs TMREAD for it, and hands what the code does not perform
//!   (operations that stall, undefined codes, register errors, jumps to addresses without
//!   code, the last block before the budget) to the reference interpreter, from the exact
//!   state the code left.
//!
//! The result is bit-exact with `picajit_interp::theia::run` in both profiles:
//! `tests/theia_jit.rs` runs both on examples and random programs.

pub mod a64;
pub mod ctx;
pub mod lower;
pub mod x64;

use crate::error::Error;
use crate::host::runtime::{ExecCode, PlainBlock};
use crate::host::Backend;
use ctx::{TheiaCtx, EXIT_FLUSH, EXIT_RETURNED, EXIT_TMREAD, EXIT_TO_END, NO_JUMP};
use picajit_interp::theia::exec::{self, Code, Cursor, Io, RunOutcome, State, Status, TheiaError};
use picajit_interp::theia::{Profile, Word};
use std::time::{Duration, Instant};

/// A compiled THEIA program.
pub struct TheiaCompiled {
    exec: ExecCode,
    bytes: Vec<u8>,
    profile: Profile,
    code: Code,
    backend: Backend,
    compile_time: Duration,
}

impl std::fmt::Debug for TheiaCompiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TheiaCompiled({}, {}, {} bytes)",
            self.backend,
            self.profile.name(),
            self.bytes.len()
        )
    }
}

/// Machine code for `code` on `backend`, with `entries` (code addresses runs start at) as
/// entry points.
pub fn generate(
    code: &Code,
    profile: Profile,
    backend: Backend,
    entries: &[u16],
) -> Result<Vec<u8>, Error> {
    match backend {
        Backend::X64 => x64::generate(code, profile, entries),
        Backend::A64 => a64::generate(code, profile, entries),
    }
    .map_err(Error::Internal)
}

/// Compiles `code` for `backend` (the host's, or AArch64 under the emulator when the
/// `emulate-a64` feature is on; anything else is the runtime's "cannot run on this host").
pub fn compile(
    code: &Code,
    profile: Profile,
    backend: Backend,
    entries: &[u16],
) -> Result<TheiaCompiled, Error> {
    let start = Instant::now();
    let bytes = generate(code, profile, backend, entries)?;
    let exec = ExecCode::for_backend(backend, &bytes)?;
    Ok(TheiaCompiled {
        exec,
        bytes,
        profile,
        code: code.clone(),
        backend,
        compile_time: start.elapsed(),
    })
}

impl TheiaCompiled {
    pub fn code_size(&self) -> usize {
        self.bytes.len()
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn profile(&self) -> Profile {
        self.profile
    }

    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// Runs from `entry` as `picajit_interp::theia::exec::run` would, with the same result,
    /// state and I/O calls (its error as [`Error::Theia`]).
    pub fn run(
        &self,
        state: &mut State,
        io: &mut dyn Io,
        entry: u16,
        budget: u64,
    ) -> Result<RunOutcome, Error> {
        self.run_counted(state, io, entry, budget)
            .map(|(out, _)| out)
    }

    /// [`Self::run`], also returning how many of the executed instructions the interpreter
    /// ran (the steps after an exit to the interpreter).
    pub fn run_counted(
        &self,
        state: &mut State,
        io: &mut dyn Io,
        entry: u16,
        budget: u64,
    ) -> Result<(RunOutcome, u64), Error> {
        assert_eq!(
            state.regs.len(),
            self.profile.register_count(),
            "state made for another profile"
        );
        let mut ctx = TheiaCtx::default();
        ctx_from_state(&mut ctx, state);
        let r = self.run_ctx_counted(&mut ctx, io, entry, budget);
        state_from_ctx(state, &ctx);
        r.map_err(Error::Theia)
    }

    /// Runs on state kept in a context block (no conversion on the way in and out: what an
    /// embedder that runs many invocations keeps). Rows past the profile's register count
    /// are ignored.
    pub fn run_ctx(
        &self,
        ctx: &mut TheiaCtx,
        io: &mut dyn Io,
        entry: u16,
        budget: u64,
    ) -> Result<RunOutcome, Error> {
        // The finished run's outcome is built here, in the returned value: mapped from
        // `run_ctx_counted`'s tuple it went through a stack temporary written field by field
        // and read back with wider loads, which stalled on store forwarding (a third of this
        // function's samples in perf on `bench --isa theia`).
        ctx.oq_len = 0;
        let kind = self.call(ctx, &Cursor::start(entry), budget);
        if kind == EXIT_RETURNED {
            if ctx.oq_len != 0 {
                Self::flush_queue(ctx, io);
            }
            return Ok(RunOutcome {
                status: Status::Returned(ctx.exit_arg != 0),
                steps: ctx.steps,
            });
        }
        self.resume(ctx, io, kind, budget)
            .map(|(o, _)| o)
            .map_err(Error::Theia)
    }

    /// One call into the code from `cur` (the context's other fields are the state).
    #[inline(always)]
    fn call(&self, ctx: &mut TheiaCtx, cur: &Cursor, budget: u64) -> u32 {
        let cap = budget
            .saturating_add(16)
            .saturating_mul(2048)
            .min(usize::MAX as u64) as usize;
        ctx.last_dst = cur.last_dst as u32;
        ctx.pc = cur.pc as u32;
        ctx.steps = cur.steps;
        ctx.budget = budget;
        ctx.jumped_from = cur.jumped_from.map_or(NO_JUMP, u32::from);
        let mut block = PlainBlock {
            bytes: ctx.as_bytes_mut(),
            cap,
        };
        // SAFETY: the code was generated by `generate` for this backend: a complete
        // function `fn(*mut TheiaCtx) -> u32` of the host's calling convention that touches
        // only the context block (plain bytes, no pointers inside) and its stack.
        let kind = unsafe { self.exec.call(0, &mut block) };
        match kind {
            Ok(k) => k,
            Err(e) => panic!("THEIA code failed under the emulator: {e}"),
        }
    }

    /// Hands the queued output writes to the I/O side, in program order.
    #[inline(always)]
    fn flush_queue(ctx: &mut TheiaCtx, io: &mut dyn Io) {
        let queued = (ctx.oq_len as usize).min(ctx::OQ_CAP);
        for q in &ctx.oq[..queued] {
            // Each vector copied whole (`black_box` keeps the compiler from merging the
            // two into one 16-byte load, which would stall on the code's stores).
            let addr = *std::hint::black_box(&q.addr);
            let data = *std::hint::black_box(&q.data);
            io.omem_write(addr, data);
        }
        ctx.oq_len = 0;
    }

    // Inlined into both callers: returned through memory, the result was copied with a
    // 16-byte load of smaller stores, which stalls (perf on `bench --isa theia`). Only the
    // common case stays here (the code ran to a RETURN); everything else continues in
    // `resume`, out of line: with it inlined, the whole loop's register pressure spilled
    // the hot path's values to the stack (perf showed the call's host side at a third of
    // a ray_triangle run's JIT time).
    #[inline(always)]
    fn run_ctx_counted(
        &self,
        ctx: &mut TheiaCtx,
        io: &mut dyn Io,
        entry: u16,
        budget: u64,
    ) -> Result<(RunOutcome, u64), TheiaError> {
        ctx.oq_len = 0;
        let kind = self.call(ctx, &Cursor::start(entry), budget);
        if kind == EXIT_RETURNED {
            if ctx.oq_len != 0 {
                Self::flush_queue(ctx, io);
            }
            let out = RunOutcome {
                status: Status::Returned(ctx.exit_arg != 0),
                steps: ctx.steps,
            };
            return Ok((out, 0));
        }
        self.resume(ctx, io, kind, budget)
    }

    /// Goes on after the code returned `kind` without finishing the run (or finished it
    /// with output writes queued): flushes the queue, performs TMREAD, calls the code again
    /// or hands the rest of the run to the interpreter.
    #[inline(never)]
    fn resume(
        &self,
        ctx: &mut TheiaCtx,
        io: &mut dyn Io,
        mut kind: u32,
        budget: u64,
    ) -> Result<(RunOutcome, u64), TheiaError> {
        loop {
            // The queued output writes, in program order, before anything else happens.
            Self::flush_queue(ctx, io);
            let mut cur = Cursor {
                pc: ctx.pc as u16,
                last_dst: ctx.last_dst as u16,
                steps: ctx.steps,
                jumped_from: (ctx.jumped_from != NO_JUMP).then_some(ctx.jumped_from as u16),
                // the code leaves before an instruction that reads a stale row (see
                // `lower::reads_stale`): nothing pending here
                stale: None,
            };
            match kind {
                EXIT_RETURNED => {
                    let out = RunOutcome {
                        status: Status::Returned(ctx.exit_arg != 0),
                        steps: ctx.steps,
                    };
                    return Ok((out, 0));
                }
                EXIT_FLUSH => {
                    kind = self.call(ctx, &cur, budget);
                    continue;
                }
                EXIT_TMREAD => {
                    // What `exec::step` does for TMREAD (the code checked the budget and
                    // staged the forwarded address vector).
                    let w = Word::decode(self.code.fetch(cur.pc).expect("TMREAD is loaded"));
                    let result = io.tmem_read(ctx.opa);
                    ctx.last_result = result;
                    if let Some(row) = self.profile.row(w.dst) {
                        if self.profile.writable(row) {
                            ctx.regs[row] = result;
                        }
                    }
                    cur = Cursor {
                        pc: cur.pc.wrapping_add(1),
                        last_dst: w.dst,
                        steps: cur.steps + 1,
                        jumped_from: None,
                        // a TMREAD whose successor reads its row through another address is
                        // left to the interpreter (`lower::reads_stale`)
                        stale: None,
                    };
                    kind = self.call(ctx, &cur, budget);
                    continue;
                }
                EXIT_TO_END => {}
                _ => panic!("THEIA code returned an unknown exit code {kind}"),
            }
            // The interpreter takes over from the exact state the code left.
            let mut state = State::new(self.profile);
            state_from_ctx(&mut state, ctx);
            let mut interpreted = 0u64;
            loop {
                let before = cur.steps;
                let r = exec::step(self.profile, &self.code, &mut state, io, &mut cur, budget);
                interpreted += cur.steps - before;
                match r {
                    Err(e) => {
                        ctx_from_state(ctx, &state);
                        return Err(e);
                    }
                    Ok(Some(out)) => {
                        ctx_from_state(ctx, &state);
                        return Ok((out, interpreted));
                    }
                    Ok(None) => {}
                }
            }
        }
    }
}

/// Copies a state into a context block.
pub fn ctx_from_state(ctx: &mut TheiaCtx, state: &State) {
    ctx.regs[..state.regs.len()].copy_from_slice(&state.regs);
    ctx.last_result = state.last_result;
    ctx.return_addr = state.return_addr as u32;
}

/// Copies a context block's registers, result flops and return address into a state.
pub fn state_from_ctx(state: &mut State, ctx: &TheiaCtx) {
    let rows = state.regs.len();
    state.regs.copy_from_slice(&ctx.regs[..rows]);
    state.last_result = ctx.last_result;
    state.return_addr = ctx.return_addr as u16;
}
