//! Running AArch64 code on other hosts, under the unicorn CPU emulator (feature
//! `emulate-a64`). The runtime calls [`EmuCode::call_at`] exactly where it would call native
//! code, with the same host-pointer [`JitContext`], so `CompiledShader::run`, `try_run` and
//! `Invocation::batch` (and every test) work unchanged.
//!
//! # Memory: copy in, copy out
//!
//! Generated code only touches memory reachable from its `JitContext`, so a call copies each
//! of those objects into emulator memory at fixed guest addresses, rewrites the context's
//! pointers to those addresses, runs, and copies back what the code may write (the registers,
//! the other output bank, the EMIT records it appended, the batch outputs and the context),
//! translating the output-bank pointers back to the host objects they stand for:
//!
//! ```text
//! 0x0010_0000  code (read + execute, up to CODE_MAX bytes)
//! 0x0100_0000  JitContext │ Registers │ Uniforms │ other bank │ EMIT records
//! 0x0101_0000  batch input rows (BATCH_ROWS per chunk)
//! 0x0111_0000  batch output rows
//! 0x0200_0000  stack (64 KiB, grows down)
//! 0x0300_0000  return sentinel (LR at entry; emulation stops when the PC gets there)
//! ```
//!
//! Copying (a few KiB per call) is cheaper than mapping host memory, which would need page
//! alignment of every object and a mapping per call; it also keeps the emulated code from
//! ever seeing a host address.
//!
//! # Cost
//!
//! A `Unicorn` instance is not `Send`, so each thread keeps one (created on first use) and
//! re-uses it for every shader: switching to another shader writes its code and drops the
//! emulator's translation cache for the code region. Each call is bounded by an instruction
//! cap (`emu_start` count); the PC must have reached the sentinel, otherwise the call reports a
//! deopt with `deopt_pc = u32::MAX` (and the reason in [`last_error`]), so the runtime falls
//! back to the interpreter and the differential tests flag it.

use crate::host::runtime::Status;
use crate::pica::batch::*;
use crate::pica::layout::{EmitRecord, JitContext};
use picajit_interp::pica::state::{Registers, Uniforms};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use unicorn_engine::{Arch, Mode, Prot, RegisterARM64, Unicorn};

const CODE_BASE: u64 = 0x0010_0000;
/// Largest code size that can be emulated.
pub const CODE_MAX: usize = 0x00F0_0000;
const DATA_BASE: u64 = 0x0100_0000;
const CTX_G: u64 = DATA_BASE;
const REGS_G: u64 = DATA_BASE + 0x400;
const UNIFORMS_G: u64 = DATA_BASE + 0x1000;
const OTHER_G: u64 = DATA_BASE + 0x2000;
const EMIT_G: u64 = DATA_BASE + 0x3000;
const EMIT_MAX: usize = 0xD000 / std::mem::size_of::<EmitRecord>();
const BATCH_IN_G: u64 = DATA_BASE + 0x1_0000;
const BATCH_OUT_G: u64 = DATA_BASE + 0x11_0000;
/// Rows per batch chunk.
const BATCH_ROWS: usize = 0x10_0000 / ROW;
const DATA_SIZE: u64 = 0x21_0000;
const STACK_BASE: u64 = 0x0200_0000;
const STACK_SIZE: u64 = 0x1_0000;
const SENTINEL: u64 = 0x0300_0000;
const ROW: usize = 256;

// The guest regions must not overlap, and the EMIT area must hold the runtime's buffer.
const _: () = assert!(CODE_BASE + CODE_MAX as u64 <= DATA_BASE);
const _: () = assert!(EMIT_G + (EMIT_MAX * std::mem::size_of::<EmitRecord>()) as u64 <= BATCH_IN_G);
const _: () = assert!(BATCH_IN_G + (BATCH_ROWS * ROW) as u64 <= BATCH_OUT_G);
const _: () = assert!(BATCH_OUT_G + (BATCH_ROWS * ROW) as u64 <= DATA_BASE + DATA_SIZE);
const _: () = assert!(DATA_BASE + DATA_SIZE <= STACK_BASE);
const _: () = assert!(EMIT_MAX >= crate::pica::shader::EMIT_CAPACITY);
const _: () = assert!(std::mem::size_of::<JitContext>() <= 0x400);
const _: () = assert!(std::mem::size_of::<Registers>() <= 0xC00);
const _: () = assert!(std::mem::size_of::<Uniforms>() <= 0x1000);
/// Multi-vertex code (`batch::a64`): its `SoaContext` at `CTX_G`, the uniforms after it.
const SOA_UNIFORMS_G: u64 = DATA_BASE + 0xF000;
const _: () = assert!(std::mem::size_of::<SoaContext>() <= 0xF000);
const _: () = assert!(SOA_UNIFORMS_G + 0x1000 <= BATCH_IN_G);
const _: () = assert!(BATCH_ROWS % crate::pica::batch::LANES == 0);

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static EMU: RefCell<Option<Emu>> = const { RefCell::new(None) };
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static COUNTS: std::cell::Cell<InstructionCounts> =
        const { std::cell::Cell::new(InstructionCounts { total: 0, broadcast: 0, budget: 0, q_memory: 0 }) };
}

/// AArch64 instructions emulated calls on this thread executed while counting was on
/// ([`count_instructions`]): a measurement of generated code (what the bench table cannot
/// time without AArch64 hardware), not used by the runtime.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstructionCounts {
    /// Every instruction.
    pub total: u64,
    /// Broadcast reads of one value for all lanes: `ldr s` with an immediate offset and
    /// `dup v.4s, v.s[0]` (uniform reads of the multi-vertex code).
    pub broadcast: u64,
    /// Budget checks of the multi-vertex code: `subs x24, x24, #n` and the branch after it.
    pub budget: u64,
    /// Loads and stores of whole q registers with an immediate offset (`ldr q`/`str q`):
    /// the multi-vertex code's per-lane state traffic, where a spill of a vector value
    /// would show.
    pub q_memory: u64,
}

/// Start counting the instructions emulated calls on this thread execute (from zero), or
/// stop; returns the counts so far. Counting runs a hook per instruction: measurement only.
pub fn count_instructions(on: bool) -> InstructionCounts {
    let counts = COUNTS.with(|c| c.replace(InstructionCounts::default()));
    COUNTING.with(|c| c.set(on));
    counts
}

/// Why the last emulated call on this thread failed, if it did (diagnostics).
pub fn last_error() -> Option<String> {
    LAST_ERROR.with(|e| e.borrow().clone())
}

/// Record why an emulated call failed (see [`last_error`]).
pub(crate) fn set_last_error(e: String) {
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(e));
}

/// AArch64 code prepared for emulation.
pub struct EmuCode {
    id: u64,
    code: Vec<u8>,
}

impl std::fmt::Debug for EmuCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EmuCode({} bytes)", self.code.len())
    }
}

struct Emu {
    uc: Unicorn<'static, ()>,
    /// Id of the code currently in the code region.
    loaded: u64,
    /// Programs loaded so far (see [`RENEW_AFTER`]).
    loads: u32,
}

/// Programs an emulator instance runs before it is replaced by a fresh one: what unicorn
/// keeps per translated program beyond its translation buffer is then returned too, so a
/// long run over many programs (the differential fuzzer) stays at a bounded footprint.
const RENEW_AFTER: u32 = 256;

fn err(what: &str, e: impl std::fmt::Debug) -> String {
    format!("{what}: {e:?}")
}

fn bytes_of<T>(v: &T) -> &[u8] {
    // SAFETY: any initialised `T` may be viewed as `size_of::<T>()` bytes; the types copied
    // here (`JitContext`, `Registers`, `Uniforms`, `EmitRecord`, f32 arrays) are `repr(C)`
    // plain data whose padding, where there is any, is only ever copied, never interpreted.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// Types that are plain bytes: no references, no heap, no invalid bit patterns among those
/// the generated code writes (raw pointers are translated back before use).
///
/// # Safety
///
/// Implement only for such `repr(C)` types.
unsafe trait Plain {}
// SAFETY: repr(C) structs of integers, floats, raw pointers and arrays of them.
unsafe impl Plain for JitContext {}
// SAFETY: as above.
unsafe impl Plain for Registers {}
// SAFETY: as above; its `bool` flags are written as 0/1 by the generated code.
unsafe impl Plain for EmitRecord {}
// SAFETY: an array of f32.
unsafe impl Plain for [[f32; 4]; 16] {}
// SAFETY: an array of f32 (`SoaContext::gs_slot7`).
unsafe impl Plain for [[[f32; 4]; 16]; 4] {}
// SAFETY: an array of f32 (`SoaBank`).
unsafe impl Plain for [[[f32; LANES]; 4]; 16] {}
// SAFETY: arrays of integers (a0, its row offsets, cmp).
unsafe impl Plain for [[i32; LANES]; 2] {}
// SAFETY: as above.
unsafe impl Plain for [[u32; LANES]; 2] {}
// SAFETY: integers.
unsafe impl Plain for i32 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}

/// Write batch rows to guest memory from `base` on.
fn write_rows(
    uc: &mut Unicorn<'static, ()>,
    base: u64,
    rows: &[[[f32; 4]; 16]],
) -> Result<(), String> {
    for (k, row) in rows.iter().enumerate() {
        uc.mem_write(base + (k * ROW) as u64, bytes_of(row))
            .map_err(|e| err("write rows", e))?;
    }
    Ok(())
}

/// Read a `T` from guest memory.
fn read_pod<T: Plain>(uc: &Unicorn<'static, ()>, addr: u64, out: &mut T) -> Result<(), String> {
    // SAFETY: `T` is plain data (see `bytes_of`) whose every bit pattern written by the
    // generated code is a value the Rust side accepts: f32s, integers, u8 flags, and raw
    // pointers that are translated back before any use.
    let buf = unsafe {
        std::slice::from_raw_parts_mut((out as *mut T).cast::<u8>(), std::mem::size_of::<T>())
    };
    uc.mem_read(addr, buf).map_err(|e| err("mem_read", e))
}

impl Emu {
    fn new() -> Result<Emu, String> {
        let mut uc = Unicorn::new(Arch::ARM64, Mode::ARM).map_err(|e| err("unicorn", e))?;
        uc.mem_map(CODE_BASE, CODE_MAX as u64, Prot::READ | Prot::EXEC)
            .map_err(|e| err("map code", e))?;
        uc.mem_map(DATA_BASE, DATA_SIZE, Prot::READ | Prot::WRITE)
            .map_err(|e| err("map data", e))?;
        uc.mem_map(STACK_BASE, STACK_SIZE, Prot::READ | Prot::WRITE)
            .map_err(|e| err("map stack", e))?;
        uc.mem_map(SENTINEL, 0x1000, Prot::READ | Prot::EXEC)
            .map_err(|e| err("map sentinel", e))?;
        // FP/SIMD enabled at EL0 and EL1 (CPACR_EL1.FPEN = 0b11).
        uc.reg_write(RegisterARM64::CPACR_EL1, 3 << 20)
            .map_err(|e| err("cpacr", e))?;
        Ok(Emu {
            uc,
            loaded: 0,
            loads: 0,
        })
    }

    fn load(&mut self, code: &EmuCode) -> Result<(), String> {
        if self.loaded == code.id {
            return Ok(());
        }
        self.uc
            .mem_write(CODE_BASE, &code.code)
            .map_err(|e| err("write code", e))?;
        // Drop every translation, not only those of the code range: QEMU hands out its
        // translation buffer (1 GiB on 64-bit hosts) from a pointer that only a full flush
        // rewinds, so removing ranges left the pointer climbing through fresh pages with each
        // new program (the differential fuzzer's RSS reached 1.7 GB in ten minutes).
        self.uc
            .ctl_flush_tb()
            .map_err(|e| err("flush translations", e))?;
        self.loaded = code.id;
        self.loads += 1;
        Ok(())
    }

    /// Run from `entry` with x0 = the guest context; returns w0.
    fn run(&mut self, entry: usize, cap: usize) -> Result<u32, String> {
        let uc = &mut self.uc;
        uc.reg_write(RegisterARM64::X0, CTX_G)
            .map_err(|e| err("x0", e))?;
        uc.reg_write(RegisterARM64::SP, STACK_BASE + STACK_SIZE)
            .map_err(|e| err("sp", e))?;
        uc.reg_write(RegisterARM64::X30, SENTINEL)
            .map_err(|e| err("lr", e))?;
        uc.reg_write(RegisterARM64::FPCR, 0)
            .map_err(|e| err("fpcr", e))?;
        let hook = if COUNTING.with(|c| c.get()) {
            let h = uc
                .add_code_hook(CODE_BASE, CODE_BASE + CODE_MAX as u64 - 1, |uc, addr, _| {
                    let mut word = [0u8; 4];
                    let w = match uc.mem_read(addr, &mut word) {
                        Ok(()) => u32::from_le_bytes(word),
                        Err(_) => 0,
                    };
                    COUNTS.with(|c| {
                        let mut n = c.get();
                        n.total += 1;
                        // LDR St, [Xn, #imm]; DUP Vd.4S, Vn.S[0].
                        if w & 0xFFC0_0000 == 0xBD40_0000 || w & 0xFFFF_FC00 == 0x4E04_0400 {
                            n.broadcast += 1;
                        }
                        // SUBS X24, X24, #imm (and the B.LO after it).
                        if w & 0xFFC0_03FF == 0xF100_0318 {
                            n.budget += 2;
                        }
                        // LDR Qt / STR Qt, [Xn, #imm] (unsigned offset).
                        if w & 0xFF80_0000 == 0x3D80_0000 {
                            n.q_memory += 1;
                        }
                        c.set(n);
                    });
                })
                .map_err(|e| err("hook", e))?;
            // Blocks translated before the hook existed would run without it.
            uc.ctl_flush_tb()
                .map_err(|e| err("flush translations", e))?;
            Some(h)
        } else {
            None
        };
        let started = uc.emu_start(CODE_BASE + entry as u64, SENTINEL, 0, cap);
        if let Some(h) = hook {
            uc.remove_hook(h).map_err(|e| err("unhook", e))?;
            uc.ctl_flush_tb()
                .map_err(|e| err("flush translations", e))?;
        }
        started.map_err(|e| err("emu_start", e))?;
        let pc = uc.pc_read().map_err(|e| err("pc", e))?;
        if pc != SENTINEL {
            return Err(format!(
                "stopped at {pc:#x} (instruction cap {cap} reached?)"
            ));
        }
        let x0 = uc.reg_read(RegisterARM64::X0).map_err(|e| err("x0", e))?;
        Ok(x0 as u32)
    }
}

impl EmuCode {
    /// Prepare `code` (at most [`CODE_MAX`] bytes).
    pub fn new(code: &[u8]) -> Result<EmuCode, String> {
        if code.len() > CODE_MAX {
            return Err(format!(
                "{} bytes of code is too large to emulate",
                code.len()
            ));
        }
        Ok(EmuCode {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            code: code.to_vec(),
        })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Run the entry at `entry` on `ctx` in the emulator, with the semantics of a native call.
    ///
    /// # Safety
    ///
    /// The pointers in `ctx` must satisfy the contract of
    /// `crate::host::runtime::ExecCode::call_at` (they are read and written here
    /// instead of by the generated code).
    pub unsafe fn call_at(&self, entry: usize, ctx: &mut JitContext) -> Status {
        let r = self.with_emu(|emu| {
            // SAFETY: forwarded contract.
            unsafe { call(emu, entry, ctx) }
        });
        match r {
            Ok(s) => s,
            Err(e) => {
                LAST_ERROR.with(|l| *l.borrow_mut() = Some(e));
                ctx.deopt_pc = u32::MAX;
                Status::Deopt
            }
        }
    }
}

impl EmuCode {
    /// Run `f` on this thread's emulator with this code loaded (a fresh emulator after
    /// [`RENEW_AFTER`] programs).
    fn with_emu<R>(&self, f: impl FnOnce(&mut Emu) -> Result<R, String>) -> Result<R, String> {
        EMU.with(|cell| {
            let mut slot = cell.borrow_mut();
            let renew = slot
                .as_ref()
                .is_some_and(|e| e.loads >= RENEW_AFTER && e.loaded != self.id);
            if slot.is_none() || renew {
                *slot = None;
                *slot = Some(Emu::new()?);
            }
            let emu = slot.as_mut().ok_or("no emulator")?;
            emu.load(self)?;
            f(emu)
        })
    }

    /// Run multi-vertex code (`batch::a64`, entry at offset 0) on `ctx`, with the semantics of a
    /// native call: groups of rows from `batch_done` while a whole group is left, `batch_done`,
    /// `batch_instructions`, `batch_splits` and `deopt_pc` updated, output rows of finished groups
    /// written. Returns the status (0 done). Rows go through the guest row buffers in
    /// chunks, as for the per-vertex batch entry; of the context, the guest gets only what
    /// the code reads before writing it (the flushed uniform tables and the scalars).
    ///
    /// # Safety
    ///
    /// `ctx.uniforms` must be valid for reading, and `ctx.batch_input` / `ctx.batch_output`
    /// valid for reading / writing `batch_count` rows.
    pub unsafe fn call_soa(&self, ctx: &mut SoaContext) -> Result<u32, String> {
        self.with_emu(|emu| {
            let w = soa_write;
            let uc = &mut emu.uc;
            // SAFETY: the caller guarantees `uniforms` is valid for reading.
            unsafe { write_soa_shared(uc, ctx) }?;
            // What code generated for `run_batch_from` starts every group from (other code
            // does not read it).
            w(uc, SOA_START_TEMP, bytes_of(&ctx.start_temp))?;
            w(uc, SOA_START_A0, bytes_of(&ctx.start_a0))?;
            w(uc, SOA_START_A0_REL, bytes_of(&ctx.start_a0_rel))?;
            w(uc, SOA_START_CMP, bytes_of(&ctx.start_cmp))?;
            w(uc, SOA_START_AL, &ctx.start_al.to_le_bytes())?;
            let count = ctx.batch_count as usize;
            while ctx.batch_done as usize + LANES <= count {
                let done = ctx.batch_done as usize;
                let rows = (count - done).min(BATCH_ROWS);
                // SAFETY: the caller guarantees `batch_count` valid input and output rows.
                let (inp, outp) = unsafe {
                    (
                        std::slice::from_raw_parts(ctx.batch_input.add(done), rows),
                        std::slice::from_raw_parts_mut(ctx.batch_output.add(done), rows),
                    )
                };
                let uc = &mut emu.uc;
                write_rows(uc, BATCH_IN_G, inp)?;
                // The output registers the caller did not ask for (`out_mask`) keep their
                // contents, as in a native call: the guest rows start as the host's.
                write_rows(uc, BATCH_OUT_G, outp)?;
                // Biased so that row `done` lands at the start of the guest row buffers.
                let bias = (done * ROW) as u64;
                w(
                    uc,
                    SOA_BATCH_INPUT,
                    &BATCH_IN_G.wrapping_sub(bias).to_le_bytes(),
                )?;
                w(
                    uc,
                    SOA_BATCH_OUTPUT,
                    &BATCH_OUT_G.wrapping_sub(bias).to_le_bytes(),
                )?;
                w(uc, SOA_BATCH_COUNT, &((done + rows) as u64).to_le_bytes())?;
                w(uc, SOA_BATCH_DONE, &(done as u64).to_le_bytes())?;
                w(
                    uc,
                    SOA_BATCH_INSTRUCTIONS,
                    &ctx.batch_instructions.to_le_bytes(),
                )?;
                w(uc, SOA_BATCH_SPLITS, &ctx.batch_splits.to_le_bytes())?;
                let w0 = emu.run(0, cap(ctx.budget, rows))?;
                let uc = &mut emu.uc;
                let mut word = [0u8; 8];
                let r = |off: i32, buf: &mut [u8]| {
                    uc.mem_read(CTX_G + off as u64, buf)
                        .map_err(|e| err("read context", e))
                };
                r(SOA_BATCH_DONE, &mut word)?;
                let out_done = u64::from_le_bytes(word);
                r(SOA_BATCH_INSTRUCTIONS, &mut word)?;
                ctx.batch_instructions = u64::from_le_bytes(word);
                r(SOA_BATCH_SPLITS, &mut word)?;
                ctx.batch_splits = u64::from_le_bytes(word);
                let mut half = [0u8; 4];
                r(SOA_DEOPT_PC, &mut half)?;
                ctx.deopt_pc = u32::from_le_bytes(half);
                let finished = (out_done as usize)
                    .checked_sub(done)
                    .filter(|&f| f <= rows)
                    .ok_or_else(|| format!("batch_done moved from {done} to {out_done}"))?;
                for (k, row) in outp.iter_mut().enumerate().take(finished) {
                    read_pod(&emu.uc, BATCH_OUT_G + (k * ROW) as u64, row)?;
                }
                ctx.batch_done = out_done;
                if w0 != 0 {
                    return Ok(w0);
                }
            }
            Ok(0)
        })
    }

    /// [`Self::call_soa`] for geometry-shader code (`batch::geometry`): the registers the
    /// lanes carry over go in and come back with the rows `geometry::materialise` reads, and
    /// the emitted vertices of finished groups are written where `gs_rows_next` /
    /// `gs_flags_next` lead (advanced past them), through a guest buffer in chunks of whole
    /// groups.
    ///
    /// # Safety
    ///
    /// `ctx.uniforms` must be valid for reading, `ctx.batch_input` for reading `batch_count`
    /// rows, and `gs_rows_next` / `gs_flags_next` for writing `batch_count · gs_row_stride`
    /// / `batch_count · gs_flag_stride` bytes.
    pub unsafe fn call_soa_gs(&self, ctx: &mut SoaContext) -> Result<u32, String> {
        self.with_emu(|emu| {
            let w = soa_write;
            let uc = &mut emu.uc;
            // SAFETY: the caller guarantees `uniforms` is valid for reading.
            unsafe { write_soa_shared(uc, ctx) }?;
            w(uc, SOA_TEMP, bytes_of(&ctx.temp))?;
            w(uc, SOA_OUTPUT, bytes_of(&ctx.output))?;
            w(uc, SOA_A0, bytes_of(&ctx.a0))?;
            w(uc, SOA_A0_REL, bytes_of(&ctx.a0_rel))?;
            w(uc, SOA_CMP, bytes_of(&ctx.cmp))?;
            w(uc, SOA_AL, &ctx.al.to_le_bytes())?;
            w(uc, SOA_GS_EMITS, &ctx.gs_emits.to_le_bytes())?;
            w(uc, SOA_GS_VSIZE, &ctx.gs_vsize.to_le_bytes())?;
            w(uc, SOA_GS_ROW_STRIDE, &ctx.gs_row_stride.to_le_bytes())?;
            w(uc, SOA_GS_FLAG_STRIDE, &ctx.gs_flag_stride.to_le_bytes())?;
            w(uc, SOA_GS_ROW_OFF, bytes_of(&ctx.gs_row_off))?;
            w(uc, SOA_GS_SLOTS_HIT, &ctx.gs_slots_hit.to_le_bytes())?;
            w(uc, SOA_BATCH_OUTPUT, &0u64.to_le_bytes())?;
            // The group's emitted rows, then its flags, in the guest output row buffer.
            let (row_stride, flag_stride) =
                (ctx.gs_row_stride as usize, ctx.gs_flag_stride as usize);
            let per_group = LANES * (row_stride + flag_stride);
            let space = BATCH_ROWS * ROW;
            let chunk_groups = space.checked_div(per_group).unwrap_or(BATCH_ROWS / LANES);
            if chunk_groups == 0 {
                return Err(format!(
                    "{per_group} bytes of vertices per group do not fit the guest buffer"
                ));
            }
            let count = ctx.batch_count as usize;
            let mut status = 0;
            while ctx.batch_done as usize + LANES <= count {
                let done = ctx.batch_done as usize;
                let rows = (count - done).min(BATCH_ROWS).min(chunk_groups * LANES);
                let rows = rows - rows % LANES;
                // SAFETY: the caller guarantees `batch_count` valid input rows.
                let inp = unsafe { std::slice::from_raw_parts(ctx.batch_input.add(done), rows) };
                let uc = &mut emu.uc;
                write_rows(uc, BATCH_IN_G, inp)?;
                let bias = (done * ROW) as u64;
                w(
                    uc,
                    SOA_BATCH_INPUT,
                    &BATCH_IN_G.wrapping_sub(bias).to_le_bytes(),
                )?;
                let flags_g = BATCH_OUT_G + (rows * row_stride) as u64;
                w(uc, SOA_GS_ROWS_NEXT, &BATCH_OUT_G.to_le_bytes())?;
                w(uc, SOA_GS_FLAGS_NEXT, &flags_g.to_le_bytes())?;
                w(uc, SOA_BATCH_COUNT, &((done + rows) as u64).to_le_bytes())?;
                w(uc, SOA_BATCH_DONE, &(done as u64).to_le_bytes())?;
                w(
                    uc,
                    SOA_BATCH_INSTRUCTIONS,
                    &ctx.batch_instructions.to_le_bytes(),
                )?;
                let w0 = emu.run(0, cap(ctx.budget, rows))?;
                let uc = &emu.uc;
                let mut word = [0u8; 8];
                let r = |off: i32, buf: &mut [u8]| {
                    uc.mem_read(CTX_G + off as u64, buf)
                        .map_err(|e| err("read context", e))
                };
                r(SOA_BATCH_DONE, &mut word)?;
                let out_done = u64::from_le_bytes(word);
                r(SOA_BATCH_INSTRUCTIONS, &mut word)?;
                ctx.batch_instructions = u64::from_le_bytes(word);
                let mut half = [0u8; 4];
                r(SOA_DEOPT_PC, &mut half)?;
                ctx.deopt_pc = u32::from_le_bytes(half);
                let finished = (out_done as usize)
                    .checked_sub(done)
                    .filter(|&f| f <= rows && f % LANES == 0)
                    .ok_or_else(|| format!("batch_done moved from {done} to {out_done}"))?;
                let (row_bytes, flag_bytes) = (finished * row_stride, finished * flag_stride);
                // The places are spare capacity (uninitialised): copied to, never borrowed.
                let mut buf = vec![0u8; row_bytes.max(flag_bytes)];
                for (from, len, to, what) in [
                    (BATCH_OUT_G, row_bytes, ctx.gs_rows_next, "read vertices"),
                    (flags_g, flag_bytes, ctx.gs_flags_next, "read flags"),
                ] {
                    uc.mem_read(from, &mut buf[..len])
                        .map_err(|e| err(what, e))?;
                    // SAFETY: the caller guarantees the places are writable for
                    // `batch_count` rows' worth of vertices; these are the next `finished`
                    // rows' worth, and `buf` holds `len` bytes.
                    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), to as *mut u8, len) };
                }
                ctx.gs_rows_next += row_bytes as u64;
                ctx.gs_flags_next += flag_bytes as u64;
                ctx.batch_done = out_done;
                if w0 != 0 {
                    status = w0;
                    break;
                }
            }
            let uc = &emu.uc;
            let at = |off: i32| CTX_G + off as u64;
            read_pod(uc, at(SOA_TEMP), &mut ctx.temp)?;
            read_pod(uc, at(SOA_OUTPUT), &mut ctx.output)?;
            read_pod(uc, at(SOA_A0), &mut ctx.a0)?;
            read_pod(uc, at(SOA_A0_REL), &mut ctx.a0_rel)?;
            read_pod(uc, at(SOA_CMP), &mut ctx.cmp)?;
            read_pod(uc, at(SOA_AL), &mut ctx.al)?;
            read_pod(uc, at(SOA_GS_SLOTS_HIT), &mut ctx.gs_slots_hit)?;
            read_pod(uc, at(SOA_GS_LAST7), &mut ctx.gs_last7)?;
            read_pod(uc, at(SOA_GS_PREV7), &mut ctx.gs_prev7)?;
            read_pod(uc, at(SOA_GS_LAST6), &mut ctx.gs_last6)?;
            read_pod(uc, at(SOA_GS_SLOT7), &mut ctx.gs_slot7)?;
            Ok(status)
        })
    }

    /// Run the entry at `entry` with x0 pointing at a guest copy of `data` (plain bytes, at
    /// most the data area's size), copying it back afterwards; at most `cap` instructions.
    pub fn call_plain(&self, entry: usize, data: &mut [u8], cap: usize) -> Result<u32, String> {
        if data.len() as u64 > DATA_SIZE {
            return Err(format!(
                "{} bytes of context do not fit the guest data area",
                data.len()
            ));
        }
        EMU.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(Emu::new()?);
            }
            let emu = slot.as_mut().ok_or("no emulator")?;
            emu.load(self)?;
            emu.uc
                .mem_write(CTX_G, data)
                .map_err(|e| err("write data", e))?;
            let w0 = emu.run(entry, cap)?;
            emu.uc
                .mem_read(CTX_G, data)
                .map_err(|e| err("read data", e))?;
            Ok(w0)
        })
    }
}

/// Write `bytes` at offset `off` of the guest's copy of the context.
fn soa_write(uc: &mut Unicorn<'static, ()>, off: i32, bytes: &[u8]) -> Result<(), String> {
    uc.mem_write(CTX_G + off as u64, bytes)
        .map_err(|e| err("write context", e))
}

/// What every multi-vertex entry (vertex and geometry code) reads of the context before
/// writing it: the uniform table (copied to guest memory and pointed at), its flushed and
/// relative copies, the budget and the output mask.
///
/// # Safety
///
/// `ctx.uniforms` must be valid for reading.
unsafe fn write_soa_shared(uc: &mut Unicorn<'static, ()>, ctx: &SoaContext) -> Result<(), String> {
    // SAFETY: the caller guarantees `uniforms` is valid for reading.
    let uniforms = unsafe { &*ctx.uniforms };
    uc.mem_write(SOA_UNIFORMS_G, bytes_of(uniforms))
        .map_err(|e| err("write uniforms", e))?;
    soa_write(uc, SOA_UNIFORMS_FLUSHED, bytes_of(&ctx.uniforms_flushed))?;
    soa_write(uc, SOA_UNIFORMS_REL, bytes_of(&ctx.uniforms_rel))?;
    soa_write(uc, SOA_UNIFORMS, &SOA_UNIFORMS_G.to_le_bytes())?;
    soa_write(uc, SOA_BUDGET, &ctx.budget.to_le_bytes())?;
    soa_write(uc, SOA_OUT_MASK, &ctx.out_mask.to_le_bytes())
}

fn status(w0: u32) -> Status {
    match w0 {
        0 => Status::Done,
        2 => Status::Budget,
        _ => Status::Deopt,
    }
}

/// Instruction cap of one call: far above what any budget-bounded run needs (a PICA
/// instruction is at most a few hundred AArch64 instructions), so reaching it means a bug.
fn cap(budget: u64, rows: usize) -> usize {
    let per_row = budget.saturating_add(16).saturating_mul(1024);
    per_row
        .saturating_mul(rows.max(1) as u64)
        .min(usize::MAX as u64) as usize
}

/// # Safety
///
/// As [`EmuCode::call_at`].
unsafe fn call(emu: &mut Emu, entry: usize, ctx: &mut JitContext) -> Result<Status, String> {
    let regs_host = ctx.regs;
    let regs_end = regs_host as usize + std::mem::size_of::<Registers>();
    // Host pointer into `*regs` → guest address, or None.
    let in_regs = |p: usize| -> Option<u64> {
        (p >= regs_host as usize && p < regs_end).then(|| REGS_G + (p - regs_host as usize) as u64)
    };
    // SAFETY: the caller guarantees `regs` and `uniforms` are valid (read).
    let (regs, uniforms) = unsafe { (&*ctx.regs, &*ctx.uniforms) };
    let uc = &mut emu.uc;
    uc.mem_write(REGS_G, bytes_of(regs))
        .map_err(|e| err("write regs", e))?;
    uc.mem_write(UNIFORMS_G, bytes_of(uniforms))
        .map_err(|e| err("write uniforms", e))?;
    let mut g = JitContext::default();
    g.regs = REGS_G as usize as *mut Registers;
    g.uniforms = UNIFORMS_G as usize as *const Uniforms;
    g.budget = ctx.budget;
    g.loop_counters = ctx.loop_counters;
    g.deopt_pc = ctx.deopt_pc;
    g.setemit = ctx.setemit;
    g.emit_len = ctx.emit_len;

    if entry != 0 {
        // SAFETY: forwarded contract.
        return unsafe { batch(emu, entry, ctx, g) };
    }

    // Single invocation: input/output point into `*regs` (or an output bank elsewhere).
    let guest_of_bank = |p: usize, other: usize| -> Result<u64, String> {
        if let Some(a) = in_regs(p) {
            Ok(a)
        } else if p == other && p != 0 {
            Ok(OTHER_G)
        } else {
            Err("an output pointer outside the registers and banks".into())
        }
    };
    let input = in_regs(ctx.input as usize).ok_or("input outside the registers")?;
    g.input = input as usize as *const [[f32; 4]; 16];
    let other_host = ctx.other_bank as usize;
    let out_g = guest_of_bank(ctx.output as usize, other_host)?;
    g.output = out_g as usize as *mut [[f32; 4]; 16];
    if !ctx.other_bank.is_null() {
        // SAFETY: the caller guarantees `other_bank` is valid (read/write).
        let other = unsafe { &*ctx.other_bank };
        uc.mem_write(OTHER_G, bytes_of(other))
            .map_err(|e| err("write bank", e))?;
        g.other_bank = OTHER_G as usize as *mut [[f32; 4]; 16];
        g.emit_buf = EMIT_G as usize as *mut EmitRecord;
        // A larger host buffer only means fewer deopts; past the guest area the code deopts
        // as it would with a smaller buffer.
        g.emit_cap = ctx.emit_cap.min(EMIT_MAX as u32);
    }
    uc.mem_write(CTX_G, bytes_of(&g))
        .map_err(|e| err("write ctx", e))?;
    let w0 = emu.run(entry, cap(ctx.budget, 1))?;
    let uc = &mut emu.uc;
    let mut out = JitContext::default();
    read_pod(uc, CTX_G, &mut out)?;
    // SAFETY: the caller guarantees `regs` is valid for writing and not otherwise borrowed.
    let regs = unsafe { &mut *ctx.regs };
    read_pod(uc, REGS_G, regs)?;
    ctx.budget = out.budget;
    ctx.loop_counters = out.loop_counters;
    ctx.deopt_pc = out.deopt_pc;
    ctx.setemit = out.setemit;
    ctx.emit_len = out.emit_len;
    if !ctx.other_bank.is_null() {
        // The code swaps the two bank pointers; map each guest bank back to its host object.
        let regs_out = std::ptr::addr_of_mut!(regs.output);
        let other_host_ptr = ctx.other_bank;
        // SAFETY: valid for writing (caller contract).
        read_pod(uc, OTHER_G, unsafe { &mut *other_host_ptr })?;
        let host_of = |a: u64| -> Result<*mut [[f32; 4]; 16], String> {
            if a == REGS_G + picajit_interp::pica::state::OFFSET_OUTPUT as u64 {
                Ok(regs_out)
            } else if a == OTHER_G {
                Ok(other_host_ptr)
            } else {
                Err(format!("unknown output bank {a:#x}"))
            }
        };
        ctx.output = host_of(out.output as usize as u64)?;
        ctx.other_bank = host_of(out.other_bank as usize as u64)?;
        let n = (out.emit_len as usize).min(g.emit_cap as usize);
        for k in 0..n {
            // `emit_buf` may be uninitialised memory (a Vec's spare capacity): read into a
            // local and move it there instead of forming a reference to it.
            let mut rec = EmitRecord {
                outputs: [[0.0; 4]; 16],
                slot: 0,
                primitive: false,
                winding: false,
            };
            read_pod(
                uc,
                EMIT_G + (k * std::mem::size_of::<EmitRecord>()) as u64,
                &mut rec,
            )?;
            // SAFETY: `emit_buf` holds `emit_cap` records (caller contract) and
            // k < g.emit_cap <= emit_cap.
            unsafe { ctx.emit_buf.add(k).write(rec) };
        }
    } else if let Some(a) = in_regs(ctx.output as usize) {
        // Vertex shaders never move the output pointer.
        if out.output as usize as u64 != a {
            return Err("output pointer moved".into());
        }
    }
    Ok(status(w0))
}

/// The batch entry, in chunks of [`BATCH_ROWS`] rows: the guest row pointers are biased so
/// that row `batch_done` of each chunk lands at the start of the guest row buffers.
///
/// # Safety
///
/// As [`EmuCode::call_at`].
unsafe fn batch(
    emu: &mut Emu,
    entry: usize,
    ctx: &mut JitContext,
    mut g: JitContext,
) -> Result<Status, String> {
    let count = ctx.batch_count as usize;
    let mut result = Status::Done;
    while (ctx.batch_done as usize) < count {
        let done = ctx.batch_done as usize;
        let rows = (count - done).min(BATCH_ROWS);
        // SAFETY: the caller guarantees `batch_count` valid input and output rows.
        let (inp, outp) = unsafe {
            (
                std::slice::from_raw_parts(ctx.batch_input.add(done), rows),
                std::slice::from_raw_parts_mut(ctx.batch_output.add(done), rows),
            )
        };
        let uc = &mut emu.uc;
        write_rows(uc, BATCH_IN_G, inp)?;
        let bias = (done * ROW) as u64;
        g.batch_input = BATCH_IN_G.wrapping_sub(bias) as usize as *const [[f32; 4]; 16];
        g.batch_output = BATCH_OUT_G.wrapping_sub(bias) as usize as *mut [[f32; 4]; 16];
        g.batch_count = (done + rows) as u64;
        g.batch_done = done as u64;
        g.batch_instructions = ctx.batch_instructions;
        g.budget = ctx.budget;
        uc.mem_write(CTX_G, bytes_of(&g))
            .map_err(|e| err("write ctx", e))?;
        let w0 = emu.run(entry, cap(ctx.budget, rows))?;
        let uc = &mut emu.uc;
        let mut out = JitContext::default();
        read_pod(uc, CTX_G, &mut out)?;
        let finished = out.batch_done as usize - done;
        // The rows that ran, including a stopped one (the runtime overwrites it).
        for (k, row) in outp.iter_mut().enumerate().take((finished + 1).min(rows)) {
            read_pod(uc, BATCH_OUT_G + (k * ROW) as u64, row)?;
        }
        ctx.batch_done = out.batch_done;
        ctx.batch_instructions = out.batch_instructions;
        ctx.deopt_pc = out.deopt_pc;
        result = status(w0);
        if result != Status::Done {
            break;
        }
    }
    // SAFETY: the caller guarantees `regs` is valid for writing.
    read_pod(&emu.uc, REGS_G, unsafe { &mut *ctx.regs })?;
    Ok(result)
}
