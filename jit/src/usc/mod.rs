//! JIT for PowerVR USC programs (seed 004): instances as SIMD lanes.
//!
//! The x86-64 backend ([`x64`]) keeps the 16 instances of a task in two AVX2 registers per
//! value (lanes 0-7 and 8-15): each group is compiled twice, once per half, with the half's
//! execution mask (instances that exist, whose Pe bit is set unless the group says
//! `(ignorepe)`, and whose predicate holds); stores blend into the executing lanes only, so
//! divergent instances (CNDST/CNDEF/CNDEND/CNDLT and predicated groups) run masked, and a
//! predicated branch jumps when any (or all) of the running instances agree.
//!
//! Groups the backend does not lower (integer, PCK/UNPCK, FRSQ/FLOG/FEXP, the rarer bitwise
//! and conditional instructions, links, writes to shared registers) call the reference
//! interpreter's step for that group ([`picajit_interp::usc::Prepared::step`]) on the same
//! register memory, so their results are the interpreter's by construction. Generated code
//! and interpreter steps share the state: the per-instance banks are the interpreter's
//! arrays (16 lanes per register), p0 and Pe are lane masks in [`UscCtx`] and are copied to
//! and from the interpreter's state around each step.
//!
//! `tests/usc_jit.rs` runs every instruction shape and random programs on both engines and
//! compares the whole state bit for bit.

#[cfg(target_arch = "x86_64")]
use crate::runtime::code_buffer::ExecCode;
use picajit_interp::usc::program::Reg;
use picajit_interp::usc::{ExecError, Outcome, Prepared, State, MAX_INSTANCES};
// The interpreter calls and the run's result exist only where the x86-64 code runs.
#[cfg(target_arch = "x86_64")]
use picajit_interp::usc::{Flow, Status};

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
    _pad: u64,
    /// p0 per lane: 0 or all ones.
    pub p0: [u32; MAX_INSTANCES],
    /// Pe per lane: 0 or all ones.
    pub pe: [u32; MAX_INSTANCES],
    /// Lanes that exist (instance < count): all ones, others 0.
    pub lanes: [u32; MAX_INSTANCES],
    /// Scratch for the code (pending p0 writes).
    pub scratch: [u32; 2 * MAX_INSTANCES],
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
    #[cfg(target_arch = "x86_64")]
    code: ExecCode,
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
            "UscCode({} bytes, {}/{} groups native)",
            self.code_bytes, self.native_groups, self.groups
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

#[cfg(target_arch = "x86_64")]
/// FRSQ, FLOG or FEXP (`op` 0, 1, 2) of the 16 words at `data`, in place: the float model's
/// functions, for generated code.
extern "sysv64" fn complex(op: u32, data: *mut u32) {
    // SAFETY: generated code passes its context's 16-word scratch area.
    let d = unsafe { std::slice::from_raw_parts_mut(data, MAX_INSTANCES) };
    let f = match op {
        0 => picajit_interp::usc::float::frsq,
        1 => picajit_interp::usc::float::flog,
        _ => picajit_interp::usc::float::fexp,
    };
    for v in d {
        *v = f(*v);
    }
}

/// Address of `complex` for the code generator; 0 off x86-64, where the code is generated
/// only to be inspected (`x64::compile` refuses to make it executable there).
pub fn complex_fn() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        complex as *const () as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
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

impl UscCode {
    /// Runs the program from its first group on `state` until it ends or `budget` groups
    /// have executed: the same result as [`Prepared::run`].
    pub fn run(&self, p: &Prepared, state: &mut State, budget: u64) -> Result<Outcome, ExecError> {
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
            let code = unsafe { self.code.call_sysv(&mut ctx as *mut UscCtx) }
                .expect("x86-64 code is native");
            // SAFETY: the generated code has returned; `env.state` is `state`.
            let st = unsafe { &mut *env.state };
            sync_in(&ctx, st);
            for (k, s) in self.sites.iter().enumerate() {
                if sites[k] != 0 {
                    match s {
                        Site::Reg(r) => st.mark_touched(*r),
                        Site::P0 => st.mark_p0_touched(),
                    }
                }
            }
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
            let _ = (p, state, budget, &self.sites);
            unreachable!("USC code is only created on x86-64 hosts")
        }
    }
}
