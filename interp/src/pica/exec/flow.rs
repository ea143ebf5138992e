//! The hardware's control-flow stacks (the PICA200 documentation, "Control Flow").
//!
//! Three independent stacks, each a ring buffer that silently drops its oldest entry when a
//! push overflows it: CALL (4 deep), IF (8 deep) and LOOP (4 deep). After every instruction
//! the PC is incremented and each stack compares its own copy of that PC with its top entry:
//!
//! * LOOP and IF act at most once per instruction. A BREAK (or taken BREAKC) is the LOOP
//!   stack's action for its instruction: it pops the top frame and sets the LOOP stack's copy
//!   of the PC to that frame's end, so no loop end is checked after it (the frame below is
//!   not stepped or popped even when the BREAK is its last word), and the break target has
//!   LOOP priority. The documentation allows one LOOP pop per instruction; the other
//!   reading, a BREAK as a jump after which the new top's end is still checked, pops two frames when a BREAKC
//!   ends the loop around the one it leaves (the two programs of
//!   `tests/control_flow_regressions.rs` with their hand traces; minimal forms in
//!   `interp/tests/exec_flow.rs`);
//! * CALL keeps popping while its (updated) copy matches the new top, except that the
//!   fourth consecutive pop fails to update the copy (a hardware bug: the third return
//!   address wins);
//! * the copies are then merged by priority LOOP > IF > CALL > jump > PC+1, and a jump taken
//!   by the instruction itself only applies if no stack acted.
//!
//! Jumps here are every PC change an instruction requests: JMPC/JMPU, the branch of a CALL,
//! CALLC, CALLU and the false branch of IFC/IFU (BREAK's exit is the LOOP stack's, above). Treating CALL's branch like
//! JMP is a choice: it is consistent with picasso padding a NOP after a CALL that ends a
//! block, which is the case where a stack pop would override it.

/// A fixed-capacity stack that drops the oldest entry on overflow.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ring<T: Copy + Default, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + Default, const N: usize> Default for Ring<T, N> {
    fn default() -> Self {
        Ring {
            items: [T::default(); N],
            len: 0,
        }
    }
}

impl<T: Copy + Default, const N: usize> Ring<T, N> {
    #[inline]
    pub fn push(&mut self, item: T) {
        if self.len == N {
            self.items.copy_within(1.., 0);
            self.items[N - 1] = item;
        } else {
            self.items[self.len] = item;
            self.len += 1;
        }
    }

    #[inline]
    pub fn top(&self) -> Option<&T> {
        self.len.checked_sub(1).map(|i| &self.items[i])
    }

    #[inline]
    pub fn top_mut(&mut self) -> Option<&mut T> {
        self.len.checked_sub(1).map(|i| &mut self.items[i])
    }

    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let i = self.len.checked_sub(1)?;
        self.len = i;
        Some(self.items[i])
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pop the top frame if it ends at `pc` (`frame` gives a frame's end and where it sends
    /// the PC), returning where it sends the PC.
    #[inline]
    fn pop_at(&mut self, pc: u32, frame: impl Fn(&T) -> (u32, u32)) -> Option<u32> {
        let (end, to) = frame(self.top()?);
        (end == pc).then(|| {
            self.pop();
            to
        })
    }
}

/// CALL entry: pop when the PC reaches `end`, continue at `ret`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallFrame {
    pub end: u32,
    pub ret: u32,
}

/// IF entry: pop when the PC reaches `end` (the else part or the block's end) and continue
/// at `target` (past the else part).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IfFrame {
    pub end: u32,
    pub target: u32,
}

/// LOOP entry: at `end` (one past the last body word) either go back to `start` or pop.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoopFrame {
    pub end: u32,
    pub start: u32,
    pub remaining: u32,
    pub step: i32,
}

/// All three stacks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stacks {
    pub call: Ring<CallFrame, 4>,
    pub ifs: Ring<IfFrame, 8>,
    pub loops: Ring<LoopFrame, 4>,
}

impl Stacks {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.call.is_empty() && self.ifs.is_empty() && self.loops.is_empty()
    }

    /// The PC after the instruction at `pc`, given the jump it requested. `al` is updated
    /// when a loop iterates. `broke` says that the instruction was a BREAK that popped the
    /// LOOP stack and `jump` is the popped frame's end.
    #[inline]
    pub fn next_pc(&mut self, pc: u32, jump: Option<u32>, broke: bool, al: &mut i32) -> u32 {
        let next = pc.wrapping_add(1);
        let mut loop_pc = None;
        let mut loop_popped = false;

        if broke {
            // The BREAK's pop was the LOOP stack's one action this instruction; its copy of
            // the PC is the end of the loop left.
            loop_pc = jump;
            loop_popped = true;
        } else if let Some(top) = self.loops.top_mut() {
            if top.end == next {
                // aL steps after every iteration, the last one included, so it is still
                // valid (one step past the last value the body saw) after the loop.
                *al = al.wrapping_add(top.step);
                if top.remaining > 0 {
                    top.remaining -= 1;
                    loop_pc = Some(top.start);
                } else {
                    // The finished loop's copy of the PC stays PC+1, so it does not outrank
                    // an IF or CALL pop at the same address; it still counts as a pop for
                    // suppressing the instruction's own jump.
                    self.loops.pop();
                    loop_popped = true;
                }
            }
        }

        pc_after(
            next,
            loop_pc,
            loop_popped,
            jump,
            |pc| self.ifs.pop_at(pc, |f| (f.end, f.target)),
            |pc| self.call.pop_at(pc, |f| (f.end, f.ret)),
        )
    }
}

/// The IF and CALL stacks' part of the PC update after an instruction and the priority merge
/// (see the module docs), once the LOOP stack has acted: the IF stack pops its top frame if it
/// ends at PC+1 (`next`), the CALL stack pops while its top frame ends at its copy of the PC,
/// and the copies merge as LOOP (`loop_pc`) > IF > CALL > the instruction's `jump` (dropped
/// when the LOOP stack popped, `loop_popped`) > PC+1. `pop_if` and `pop_call` pop their stack's
/// top frame if it ends at the PC given and return where that frame sends it. The interpreter
/// runs this on its stacks, the JIT's analysis on the static stacks of a region
/// (`jit/src/pica/analysis/regions.rs`).
#[inline]
pub fn pc_after(
    next: u32,
    loop_pc: Option<u32>,
    loop_popped: bool,
    jump: Option<u32>,
    pop_if: impl FnOnce(u32) -> Option<u32>,
    mut pop_call: impl FnMut(u32) -> Option<u32>,
) -> u32 {
    let if_pc = pop_if(next);
    let mut call_pc = next;
    let mut pops = 0;
    while let Some(ret) = pop_call(call_pc) {
        pops += 1;
        // The hardware misses the fourth consecutive update (seed 000, "Control Flow").
        if pops < 4 {
            call_pc = ret;
        }
    }
    let jump = if loop_popped { None } else { jump };
    loop_pc
        .or(if_pc)
        .or((pops > 0).then_some(call_pc))
        .or(jump)
        .unwrap_or(next)
}
