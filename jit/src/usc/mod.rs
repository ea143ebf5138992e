//! JIT for PowerVR USC programs (seed 004): instances as SIMD lanes.
//!
//! `lower.rs` walks the program once for both hosts: each group is compiled once per *chunk*
//! of lanes (x86-64: two chunks of eight lanes, one AVX2 register each; AArch64: four
//! chunks of four lanes, one NEON register each), with the chunk's execution mask (instances
//! that exist, whose Pe bit is set unless the group says `(ignorepe)`, and whose predicate
//! holds); stores blend into the executing lanes only, so divergent instances
//! (CNDST/CNDEF/CNDEND/CNDLT and predicated groups) run masked, and a predicated branch
//! jumps when any (or all) of the running instances agree. `x64.rs` and `a64.rs` encode the
//! lowering's operations.
//!
//! FRSQ, FLOG and FEXP are computed in f64 and rounded to f32 once; a lane whose f64
//! result lies too near a rounding boundary for its error bound sends the group to the
//! interpreter (`lower::COMPLEX_MARGIN`), so the results are the correctly rounded ones of
//! `picajit_interp::usc::float`.
//!
//! Groups the lowering does not perform (integer, PCK/UNPCK, the rarer bitwise and
//! conditional instructions, links, writes to shared registers) run the reference
//! interpreter's step for that group ([`picajit_interp::usc::Prepared::step`]) on the same
//! registers, so their results are the interpreter's by construction. The x86-64 code calls
//! it through the context; the AArch64 code, which also runs under the emulator where host
//! calls are impossible, leaves with the group's index and is called again at the group the
//! step continues with.
//!
//! `tests/usc_jit.rs` runs every instruction shape and random programs on the interpreter
//! and both backends and compares the whole state bit for bit.

use crate::error::Error;
#[cfg(feature = "emulate-a64")]
use crate::host::a64::emulator::Guest;
use crate::host::runtime::{CodeArg, ExecCode, PlainBlock};
use crate::host::Backend;
use picajit_interp::usc::program::Reg;
use picajit_interp::usc::{ExecError, Flow, Outcome, Prepared, State, Status, MAX_INSTANCES};

pub mod a64;
pub mod lower;
pub mod x64;

/// What generated code sees: the register banks, the lane masks and the run's counters.
#[repr(C, align(32))]
pub struct UscCtx {
    /// r0-r247, 16 lanes each.
    pub r: *mut u32,
    /// vi0-vi247.
    pub vi: *mut u32,
    /// i0-i7.
    pub i: *mut u32,
    /// idx0-idx1.
    pub idx: *mut u32,
    /// sh0-sh4095.
    pub sh: *mut u32,
    /// cf0-cf255.
    pub cf: *mut u32,
    /// `extern "sysv64" fn(*mut UscCtx, group: u32) -> u32`: runs one group on the
    /// interpreter; returns [`NEXT`], [`FAILED`] or the index of the group to jump to.
    pub helper: usize,
    /// The helper's environment.
    pub env: *mut u8,
    /// Groups executed.
    pub steps: u64,
    /// Most groups to execute.
    pub budget: u64,
    /// Per write site of the code: lanes that wrote (a bit mask ORed by the code).
    pub sites: *mut u32,
    /// The caller's MXCSR, saved by the x86-64 code's prologue and restored at its exit
    /// (`x64.rs`, "Float environment").
    pub saved_mxcsr: u32,
    _pad: u32,
    /// p0 per lane: 0 or all ones.
    pub p0: [u32; MAX_INSTANCES],
    /// Pe per lane: 0 or all ones.
    pub pe: [u32; MAX_INSTANCES],
    /// Lanes that exist (instance < count): all ones, others 0.
    pub lanes: [u32; MAX_INSTANCES],
    /// Scratch for the code (pending p0 writes).
    pub scratch: [u32; 2 * MAX_INSTANCES],
}

impl CodeArg for UscCtx {
    fn pointer(&mut self) -> *mut u8 {
        (self as *mut UscCtx).cast()
    }

    /// The context holds host pointers and a host function: only the x86-64 code, which
    /// never runs emulated, takes it (the AArch64 code takes a plain block, `a64::blk`).
    #[cfg(feature = "emulate-a64")]
    unsafe fn emulate(&mut self, _guest: &mut Guest, _entry: usize) -> Result<u32, String> {
        Err("the USC context of the x86-64 code cannot be emulated".into())
    }
}

/// Offsets of [`UscCtx`] fields, for the code generator.
pub mod off {
    pub const R: i32 = 0;
    pub const VI: i32 = 8;
    pub const I: i32 = 16;
    pub const IDX: i32 = 24;
    pub const SH: i32 = 32;
    pub const CF: i32 = 40;
    pub const HELPER: i32 = 48;
    pub const STEPS: i32 = 64;
    pub const BUDGET: i32 = 72;
    pub const SITES: i32 = 80;
    pub const SAVED_MXCSR: i32 = 88;
    pub const P0: i32 = 96;
    pub const PE: i32 = 160;
    pub const LANES: i32 = 224;
    pub const SCRATCH: i32 = 288;
}

const _: () = {
    assert!(std::mem::offset_of!(UscCtx, helper) == off::HELPER as usize);
    assert!(std::mem::offset_of!(UscCtx, steps) == off::STEPS as usize);
    assert!(std::mem::offset_of!(UscCtx, budget) == off::BUDGET as usize);
    assert!(std::mem::offset_of!(UscCtx, sites) == off::SITES as usize);
    assert!(std::mem::offset_of!(UscCtx, saved_mxcsr) == off::SAVED_MXCSR as usize);
    assert!(std::mem::offset_of!(UscCtx, p0) == off::P0 as usize);
    assert!(std::mem::offset_of!(UscCtx, pe) == off::PE as usize);
    assert!(std::mem::offset_of!(UscCtx, lanes) == off::LANES as usize);
    assert!(std::mem::offset_of!(UscCtx, scratch) == off::SCRATCH as usize);
};

/// Helper result: continue with the next group.
pub const NEXT: u32 = u32::MAX;
/// Helper result: the step failed (the error is in the environment).
pub const FAILED: u32 = u32::MAX - 1;

/// Exit codes of generated code.
pub mod exit {
    pub const DONE: u32 = 0;
    pub const BUDGET: u32 = 2;
    pub const FAILED: u32 = 3;
}

/// What a write site writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    Reg(Reg),
    P0,
}

/// A compiled USC program.
pub struct UscCode {
    exec: ExecCode,
    backend: Backend,
    sites: Vec<Site>,
    /// Bytes of machine code.
    pub code_bytes: usize,
    /// Groups lowered to machine code (the others call the interpreter's step).
    pub native_groups: usize,
    /// Groups in the program.
    pub groups: usize,
}

impl std::fmt::Debug for UscCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "UscCode({}, {} bytes, {}/{} groups native)",
            self.backend, self.code_bytes, self.native_groups, self.groups
        )
    }
}

#[cfg(target_arch = "x86_64")]
struct Env<'a> {
    prepared: &'a Prepared,
    state: *mut State,
    link: Option<usize>,
    error: Option<ExecError>,
}

#[cfg(target_arch = "x86_64")]
fn sync_in(ctx: &UscCtx, st: &mut State) {
    for l in 0..MAX_INSTANCES {
        st.p0[l] = ctx.p0[l] != 0;
        st.pe[l] = ctx.pe[l] != 0;
    }
}

#[cfg(target_arch = "x86_64")]
fn sync_out(ctx: &mut UscCtx, st: &State) {
    for l in 0..MAX_INSTANCES {
        ctx.p0[l] = if st.p0[l] { !0 } else { 0 };
        ctx.pe[l] = if st.pe[l] { !0 } else { 0 };
    }
}

/// Runs group `group` on the interpreter for generated code (x86-64 only: the System V
/// calling convention the generated code uses does not exist elsewhere).
#[cfg(target_arch = "x86_64")]
extern "sysv64" fn helper(ctx: *mut UscCtx, group: u32) -> u32 {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: generated code passes the context it was called with, whose `env` is the
        // live `Env` of `UscCode::run` (which outlives the call); no other reference to the
        // context or the state is in use while the generated code waits for this call.
        let ctx = unsafe { &mut *ctx };
        // SAFETY: as above.
        let env = unsafe { &mut *(ctx.env as *mut Env) };
        // SAFETY: `env.state` is the state `run` borrows mutably for the whole run; the
        // generated code does not touch it during this call.
        let st = unsafe { &mut *env.state };
        sync_in(ctx, st);
        let r = env.prepared.step(group as usize, st, &mut env.link);
        sync_out(ctx, st);
        match r {
            Ok(Flow::Next) => NEXT,
            Ok(Flow::Jump(t)) => t as u32,
            Err(e) => {
                env.error = Some(e);
                FAILED
            }
        }
    }));
    r.unwrap_or(FAILED)
}

/// Compiles `p` for `backend` (x86-64: this host with AVX2 and FMA; AArch64: natively on
/// AArch64 hosts, under the emulator elsewhere with the `emulate-a64` feature).
pub fn compile(p: &Prepared, backend: Backend) -> Result<UscCode, Error> {
    match backend {
        Backend::X64 => x64::compile(p),
        Backend::A64 => a64::compile(p),
    }
}

impl UscCode {
    /// The instruction set of the code.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Runs the program from its first group on `state` until it ends or `budget` groups
    /// have executed: the same result as [`Prepared::run`] (its error as [`Error::Usc`]).
    pub fn run(&self, p: &Prepared, state: &mut State, budget: u64) -> Result<Outcome, Error> {
        match self.backend {
            Backend::X64 => self.run_x64(p, state, budget),
            Backend::A64 => self.run_a64(p, state, budget),
        }
        .map_err(Error::Usc)
    }

    /// The AArch64 run: the block in and out, the interpreter's step at each helper exit.
    fn run_a64(&self, p: &Prepared, state: &mut State, budget: u64) -> Result<Outcome, ExecError> {
        let mut b = a64::block_from_state(state, self.sites.len());
        let mut group = 0usize;
        let mut steps = 0u64;
        let mut link = None;
        // Far above what the groups between two exits need (a group is at most a few
        // hundred instructions per chunk); reaching it means a bug, reported as an error.
        let cap = budget
            .saturating_add(16)
            .saturating_mul(16384)
            .min(usize::MAX as u64) as usize;
        let status = loop {
            b[a64::blk::STEPS..][..8].copy_from_slice(&steps.to_le_bytes());
            b[a64::blk::BUDGET..][..8].copy_from_slice(&budget.to_le_bytes());
            b[a64::blk::GROUP..][..4].copy_from_slice(&(group as u32).to_le_bytes());
            let mut block = PlainBlock { bytes: &mut b, cap };
            // SAFETY: the code was generated by `a64::generate`: a complete function
            // `fn(*mut u8) -> u32` of the host's calling convention touching only the block
            // (plain bytes, laid out as `a64::blk` with one word per write site of the code)
            // and its stack.
            let kind =
                unsafe { self.exec.call(0, &mut block) }.map_err(|e| ExecError::Invalid {
                    message: format!("USC AArch64 code failed under the emulator: {e}"),
                    span: Default::default(),
                })?;
            steps = u64::from_le_bytes(b[a64::blk::STEPS..][..8].try_into().expect("8 bytes"));
            match kind {
                exit::DONE => break Status::Done,
                exit::BUDGET => break Status::Budget,
                a64::EXIT_HELPER => {}
                k => {
                    return Err(ExecError::Invalid {
                        message: format!("USC AArch64 code returned an unknown exit {k}"),
                        span: Default::default(),
                    })
                }
            }
            let gi = u32::from_le_bytes(b[a64::blk::GROUP..][..4].try_into().expect("4 bytes"));
            let gi = gi as usize;
            a64::state_from_block(state, &b);
            let r = p.step(gi, state, &mut link);
            a64::state_to_block(&mut b, state);
            group = match r? {
                Flow::Next => gi + 1,
                Flow::Jump(t) => t.min(p.groups.len()),
            };
        };
        a64::state_from_block(state, &b);
        self.mark_sites(state, |k| {
            let o = a64::blk::SITES + 4 * k;
            u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes")) != 0
        });
        Ok(Outcome { status, steps })
    }

    fn mark_sites(&self, st: &mut State, wrote: impl Fn(usize) -> bool) {
        for (k, s) in self.sites.iter().enumerate() {
            if wrote(k) {
                match s {
                    Site::Reg(r) => st.mark_touched(*r),
                    Site::P0 => st.mark_p0_touched(),
                }
            }
        }
    }

    fn run_x64(&self, p: &Prepared, state: &mut State, budget: u64) -> Result<Outcome, ExecError> {
        #[cfg(target_arch = "x86_64")]
        {
            let n = state.instances();
            let mut small = [0u32; 64];
            let mut large = Vec::new();
            let sites: &mut [u32] = if self.sites.len() <= small.len() {
                &mut small
            } else {
                large.resize(self.sites.len(), 0);
                &mut large
            };
            let mut env = Env {
                prepared: p,
                state: state as *mut State,
                link: None,
                error: None,
            };
            let mut ctx = {
                // SAFETY: `state` is only reached through `env.state` from here on.
                let st = unsafe { &mut *env.state };
                let p0 = st.p0;
                let pe = st.pe;
                let b = st.banks_mut();
                UscCtx {
                    r: b.r.as_mut_ptr().cast(),
                    vi: b.vi.as_mut_ptr().cast(),
                    i: b.i.as_mut_ptr().cast(),
                    idx: b.idx.as_mut_ptr().cast(),
                    sh: b.sh.as_mut_ptr(),
                    cf: b.cf.as_mut_ptr(),
                    helper: helper as *const () as usize,
                    env: (&mut env as *mut Env).cast(),
                    steps: 0,
                    budget,
                    sites: sites.as_mut_ptr(),
                    saved_mxcsr: 0,
                    _pad: 0,
                    p0: p0.map(|b| if b { !0 } else { 0 }),
                    pe: pe.map(|b| if b { !0 } else { 0 }),
                    lanes: std::array::from_fn(|l| if l < n { !0 } else { 0 }),
                    scratch: [0; 2 * MAX_INSTANCES],
                }
            };
            // SAFETY: the code was generated by `x64::compile` for `UscCtx`; every pointer
            // in `ctx` is valid for the run: the banks are the state's arrays (sizes as the
            // generator assumes, `Bank::count`), `sites` has one word per site, `env` lives
            // until after the call.
            let code = unsafe { self.exec.call(0, &mut ctx) }.expect("x86-64 code is native");
            // SAFETY: the generated code has returned; `env.state` is `state`.
            let st = unsafe { &mut *env.state };
            sync_in(&ctx, st);
            self.mark_sites(st, |k| sites[k] != 0);
            match code {
                exit::DONE => Ok(Outcome {
                    status: Status::Done,
                    steps: ctx.steps,
                }),
                exit::BUDGET => Ok(Outcome {
                    status: Status::Budget,
                    steps: ctx.steps,
                }),
                _ => Err(env.error.take().unwrap_or(ExecError::Invalid {
                    message: "internal error in a USC helper call".into(),
                    span: Default::default(),
                })),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (p, state, budget);
            unreachable!("USC x86-64 code is only created on x86-64 hosts")
        }
    }
}
