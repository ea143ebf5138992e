//! Register files in the memory layout both engines use. The JIT addresses these structs
//! through the `OFFSET_*` constants, so the layout is `#[repr(C)]` and defined only here.
//!
//! Values are stored as `f32`. Every f24 value, including the e=0 patterns and -0, is
//! exactly representable as an f32, so storage is lossless and SIMD-friendly.

use crate::pica::float::{FloatMode, F24};
use std::mem::offset_of;

/// Number of float uniform rows, including the 32 read-only rows past c95.
pub const FLOAT_UNIFORM_ROWS: usize = 128;

/// Per-invocation registers: inputs, temporaries, outputs, address registers and flags.
#[repr(C, align(16))]
#[derive(Clone, Debug, PartialEq)]
pub struct Registers {
    /// v0-v15
    pub input: [[f32; 4]; 16],
    /// r0-r15
    pub temp: [[f32; 4]; 16],
    /// o0-o15 (for geometry shaders: the bank currently written)
    pub output: [[f32; 4]; 16],
    /// a0.x, a0.y
    pub a0: [i32; 2],
    /// aL
    pub al: i32,
    /// cmp.x, cmp.y as 0/1 bytes.
    pub cmp: [u8; 2],
    _pad: [u8; 2],
}

impl Default for Registers {
    fn default() -> Self {
        Registers {
            input: [[0.0; 4]; 16],
            temp: [[0.0; 4]; 16],
            output: [[0.0; 4]; 16],
            a0: [0; 2],
            al: 0,
            cmp: [0; 2],
            _pad: [0; 2],
        }
    }
}

impl Registers {
    /// Reset everything but the inputs: the state every vertex-shader invocation starts from.
    pub fn reset_working_state(&mut self) {
        self.temp = [[0.0; 4]; 16];
        self.output = [[0.0; 4]; 16];
        self.a0 = [0; 2];
        self.al = 0;
        self.cmp = [0; 2];
    }
}

/// The shader unit's working state that persists between invocations on hardware and that an
/// emulator keeps with its shader unit: r0-r15, a0.x/a0.y, aL and the two comparison flags.
///
/// Values are in register representation (as [`Registers::temp`] holds them). a0 and aL may
/// hold any `i32`: MOVA saturates to the `i32` range and a LOOP's aL steps without bounds;
/// relative addressing applies the documentation's offset rule to whatever they hold.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct UnitState {
    /// r0-r15.
    pub temp: [[f32; 4]; 16],
    /// a0.x, a0.y.
    pub a0: [i32; 2],
    /// aL.
    pub al: i32,
    /// cmp.x, cmp.y.
    pub cmp: [bool; 2],
}

impl UnitState {
    /// Bitwise equality (`PartialEq` compares the float registers as floats, where NaN is
    /// unequal to itself and -0 equals +0).
    pub fn bits_eq(&self, other: &UnitState) -> bool {
        self.a0 == other.a0
            && self.al == other.al
            && self.cmp == other.cmp
            && self
                .temp
                .iter()
                .zip(&other.temp)
                .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits))
    }

    /// The state every invocation starts from when none is given (all zero, flags clear):
    /// what [`Registers::reset_working_state`] leaves.
    pub fn is_clean(&self) -> bool {
        self.bits_eq(&UnitState::default())
    }
}

impl Registers {
    /// The unit state these registers hold.
    pub fn unit_state(&self) -> UnitState {
        UnitState {
            temp: self.temp,
            a0: self.a0,
            al: self.al,
            cmp: self.cmp.map(|c| c != 0),
        }
    }

    /// Put `state` into r0-r15, a0, aL and cmp (inputs and outputs untouched). The values are
    /// taken as they are: callers convert them to the float mode's register values first.
    pub fn set_unit_state(&mut self, state: &UnitState) {
        self.temp = state.temp;
        self.a0 = state.a0;
        self.al = state.al;
        self.cmp = state.cmp.map(u8::from);
    }
}

/// Byte offset of `Registers::input`.
pub const OFFSET_INPUT: usize = offset_of!(Registers, input);
/// Byte offset of `Registers::temp`.
pub const OFFSET_TEMP: usize = offset_of!(Registers, temp);
/// Byte offset of `Registers::output`.
pub const OFFSET_OUTPUT: usize = offset_of!(Registers, output);
/// Byte offset of `Registers::a0`.
pub const OFFSET_A0: usize = offset_of!(Registers, a0);
/// Byte offset of `Registers::al`.
pub const OFFSET_AL: usize = offset_of!(Registers, al);
/// Byte offset of `Registers::cmp`.
pub const OFFSET_CMP: usize = offset_of!(Registers, cmp);

/// Uniforms: float c0-c95, int i0-i3, bool b0-b15.
///
/// The float table has 128 rows: relative addressing masks the index with 0x7F and indices
/// above 95 read (1,1,1,1) on hardware, so rows 96-127 permanently hold 1.0 and an engine
/// can index the table without a range check. The setters keep those rows intact.
#[repr(C, align(16))]
#[derive(Clone, Debug, PartialEq)]
pub struct Uniforms {
    float: [[f32; 4]; FLOAT_UNIFORM_ROWS],
    int: [[u8; 4]; 4],
    bools: u16,
}

impl Default for Uniforms {
    fn default() -> Self {
        let mut float = [[0.0; 4]; FLOAT_UNIFORM_ROWS];
        for row in &mut float[96..] {
            *row = [1.0; 4];
        }
        Uniforms {
            float,
            int: [[0; 4]; 4],
            bools: 0,
        }
    }
}

/// Byte offset of the float uniform table.
pub const OFFSET_UNIFORM_FLOAT: usize = offset_of!(Uniforms, float);
/// Byte offset of the int uniforms (4 × 4 bytes: x, y, z, w).
pub const OFFSET_UNIFORM_INT: usize = offset_of!(Uniforms, int);
/// Byte offset of the bool uniforms (one u16, bit n = b`n`).
pub const OFFSET_UNIFORM_BOOL: usize = offset_of!(Uniforms, bools);

impl Uniforms {
    /// Set c`index` from values already in register representation (for example raw f24
    /// converted with [`F24::to_f32`], or f32 values in F32 mode). Indices above 95 are
    /// ignored and return false.
    pub fn set_float_raw(&mut self, index: usize, value: [f32; 4]) -> bool {
        match self.float.get_mut(index) {
            Some(row) if index < 96 => {
                *row = value;
                true
            }
            _ => false,
        }
    }

    /// Set c`index` from f32 values, converting them as the float mode's upload path does
    /// (F24: rounded to f24 with the mode's rounding; F32: kept as given).
    pub fn set_float_f32(&mut self, index: usize, value: [f32; 4], mode: FloatMode) -> bool {
        let v = match mode {
            FloatMode::F24(r) => value.map(|x| F24::from_f32(x, r).to_f32()),
            FloatMode::F32 => value,
        };
        self.set_float_raw(index, v)
    }

    /// Set c`index` from raw 24-bit patterns.
    pub fn set_float_f24(&mut self, index: usize, bits: [u32; 4]) -> bool {
        self.set_float_raw(index, bits.map(|b| F24::from_bits(b).to_f32()))
    }

    /// c`index` in register representation; indices 96-127 read 1.0 like the hardware.
    pub fn float(&self, index: usize) -> [f32; 4] {
        self.float[index & 0x7F]
    }

    /// The whole 128-row table.
    pub fn float_table(&self) -> &[[f32; 4]; FLOAT_UNIFORM_ROWS] {
        &self.float
    }

    /// Set i`index` (x = iterations - 1, y = initial aL, z = aL step, w unused).
    pub fn set_int(&mut self, index: usize, value: [u8; 4]) -> bool {
        match self.int.get_mut(index) {
            Some(row) => {
                *row = value;
                true
            }
            None => false,
        }
    }

    /// i`index`.
    pub fn int(&self, index: usize) -> [u8; 4] {
        self.int[index & 3]
    }

    /// Set b`index`.
    pub fn set_bool(&mut self, index: usize, value: bool) -> bool {
        if index >= 16 {
            return false;
        }
        if value {
            self.bools |= 1 << index;
        } else {
            self.bools &= !(1 << index);
        }
        true
    }

    /// b`index`.
    pub fn bool(&self, index: usize) -> bool {
        self.bools >> (index & 15) & 1 != 0
    }

    /// All bools, bit n = b`n`.
    pub fn bools(&self) -> u16 {
        self.bools
    }
}

/// One vertex sent by EMIT.
///
/// `#[repr(C)]` because compiled code appends these to [`GeometryState::emitted`] in place
/// (through the `OFFSET_EMITTED_*` constants) instead of going through a buffer of its own;
/// the 16-byte alignment lets it store the outputs with aligned vector stores.
#[repr(C, align(16))]
#[derive(Clone, Debug, PartialEq)]
pub struct EmittedVertex {
    /// Output registers of the bank that was current at the EMIT.
    pub outputs: [[f32; 4]; 16],
    /// Vertex-buffer slot (SETEMIT's vertex id).
    pub slot: u8,
    /// This EMIT also completed a primitive from the three buffer slots.
    pub primitive: bool,
    /// Winding flag of that primitive (SETEMIT's `inv`).
    pub winding: bool,
}

/// Byte offset of `EmittedVertex::outputs`.
pub const OFFSET_EMITTED_OUTPUTS: usize = offset_of!(EmittedVertex, outputs);
/// Byte offset of `EmittedVertex::slot`, which `primitive` and `winding` follow byte by byte.
pub const OFFSET_EMITTED_FLAGS: usize = offset_of!(EmittedVertex, slot);
const _: () = assert!(
    offset_of!(EmittedVertex, primitive) == OFFSET_EMITTED_FLAGS + 1
        && offset_of!(EmittedVertex, winding) == OFFSET_EMITTED_FLAGS + 2
);

/// A primitive completed by an EMIT with the primitive flag: the three buffer slots as
/// they were at that EMIT.
#[derive(Clone, Debug, PartialEq)]
pub struct Primitive {
    /// Slots 0, 1 and 2 of the vertex buffer.
    pub vertices: [[[f32; 4]; 16]; 3],
    /// SETEMIT's winding flag.
    pub winding: bool,
}

/// Geometry-shader state the hardware keeps across invocations: the emit parameters, the
/// second output bank and the vertex buffer (never cleared between primitives).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct GeometryState {
    /// SETEMIT vertex id for the next EMIT.
    pub vertex_id: u8,
    /// SETEMIT primitive flag for the next EMIT.
    pub primitive: bool,
    /// SETEMIT winding flag for the next EMIT.
    pub winding: bool,
    /// The output bank not currently in `Registers::output`; EMIT swaps the two, so
    /// components not rewritten since the last EMIT hold the values of two EMITs ago.
    pub other_bank: [[f32; 4]; 16],
    /// The vertex buffer. The hardware buffer has three slots; the vertex-id field is two
    /// bits wide, so slot 3 exists here to give id 3 a defined place (it is never part of
    /// a primitive).
    pub slots: [[[f32; 4]; 16]; 4],
    /// Every EMIT since the state was created or last drained with [`Self::take_output`].
    pub emitted: Vec<EmittedVertex>,
    /// Slot contents at the last drain, to replay primitives from.
    drained_slots: [[[f32; 4]; 16]; 4],
}

impl GeometryState {
    /// Drain the emitted vertices and the primitives they completed.
    pub fn take_output(&mut self) -> (Vec<EmittedVertex>, Vec<Primitive>) {
        // Drained rather than taken: the buffer keeps its capacity, which compiled code
        // writes EMIT records into directly (it reserves room before every invocation).
        let emitted: Vec<EmittedVertex> = self.emitted.drain(..).collect();
        let mut slots = self.drained_slots;
        let mut prims = Vec::new();
        for e in &emitted {
            slots[(e.slot & 3) as usize] = e.outputs;
            if e.primitive {
                prims.push(Primitive {
                    vertices: [slots[0], slots[1], slots[2]],
                    winding: e.winding,
                });
            }
        }
        self.drained_slots = self.slots;
        (emitted, prims)
    }

    /// Move the pending [`Self::emitted`] records into `out` (in order) and make the current
    /// slots the replay point of [`Self::take_output`], as a drain does.
    pub fn drain_into(&mut self, out: &mut EmitBuffer) {
        for e in self.emitted.drain(..) {
            out.push(&e);
        }
        self.drained_slots = self.slots;
    }

    /// Make the current slots the replay point of [`Self::take_output`]: for engines that
    /// delivered EMITs somewhere else than [`Self::emitted`] (an [`EmitBuffer`]) and updated
    /// `slots` themselves. `emitted` must be empty.
    pub fn mark_drained(&mut self) {
        debug_assert!(self.emitted.is_empty());
        self.drained_slots = self.slots;
    }

    /// Record an EMIT of `outputs` with the current SETEMIT parameters.
    pub fn emit(&mut self, outputs: &[[f32; 4]; 16]) {
        let slot = self.vertex_id & 3;
        self.slots[slot as usize] = *outputs;
        self.emitted.push(EmittedVertex {
            outputs: *outputs,
            slot,
            primitive: self.primitive,
            winding: self.winding,
        });
    }
}

/// SETEMIT parameters of one emitted vertex, as stored in an [`EmitBuffer`].
///
/// Four bytes, `#[repr(C)]`: compiled code writes them with one 32-bit store.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EmitFlags {
    /// Vertex-buffer slot (0-3).
    pub slot: u8,
    /// This EMIT completed a primitive.
    pub primitive: bool,
    /// Winding flag of that primitive.
    pub winding: bool,
    _pad: u8,
}

impl EmitFlags {
    /// Flags of an EMIT to `slot` (masked to 0-3).
    pub fn new(slot: u8, primitive: bool, winding: bool) -> EmitFlags {
        EmitFlags {
            slot: slot & 3,
            primitive,
            winding,
            _pad: 0,
        }
    }

    /// The flags as the little-endian word compiled code stores.
    pub fn to_bits(self) -> u32 {
        u32::from(self.slot) | u32::from(self.primitive) << 8 | u32::from(self.winding) << 16
    }
}

/// Vertices emitted by a run of many geometry-shader invocations, packed: per vertex, only
/// the output registers in [`Self::mask`] (lowest register first) and its [`EmitFlags`].
///
/// An emulator reads a few of the sixteen output registers (its output map), so storing
/// whole [`EmittedVertex`] records (272 bytes each) would cost more than a short geometry
/// shader. Vertices are in emission order: every vertex of invocation k before those of
/// invocation k + 1. Primitives are assembled by the consumer from the flags, as on
/// hardware: an EMIT with `primitive` set completes the triangle of slots 0, 1 and 2.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmitBuffer {
    mask: u16,
    /// `mask.count_ones()` rows per vertex. Kept consistent with `flags` by the methods;
    /// public so that engines can fill reserved capacity in place.
    pub rows: Vec<[f32; 4]>,
    /// One entry per vertex.
    pub flags: Vec<EmitFlags>,
}

impl EmitBuffer {
    /// An empty buffer that keeps output registers `mask` (bit n = o`n`).
    pub fn new(mask: u16) -> EmitBuffer {
        EmitBuffer {
            mask,
            rows: Vec::new(),
            flags: Vec::new(),
        }
    }

    /// The output registers kept per vertex.
    pub fn mask(&self) -> u16 {
        self.mask
    }

    /// Rows per vertex.
    pub fn rows_per_vertex(&self) -> usize {
        self.mask.count_ones() as usize
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// No vertices.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// Forget the vertices, keeping the capacity.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.flags.clear();
    }

    /// Forget the vertices from `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.flags.truncate(len);
        self.rows.truncate(len * self.rows_per_vertex());
    }

    /// Vertex `i`: its kept registers (lowest first) and flags.
    pub fn vertex(&self, i: usize) -> (&[[f32; 4]], EmitFlags) {
        let n = self.rows_per_vertex();
        (&self.rows[i * n..(i + 1) * n], self.flags[i])
    }

    /// Register o`reg` of vertex `i`, if the buffer keeps it.
    pub fn output(&self, i: usize, reg: usize) -> Option<[f32; 4]> {
        if reg >= 16 || self.mask & (1 << reg) == 0 {
            return None;
        }
        let k = (self.mask & ((1u16 << reg) - 1)).count_ones() as usize;
        Some(self.rows[i * self.rows_per_vertex() + k])
    }

    /// Append one emitted vertex (its registers outside the mask are dropped).
    pub fn push(&mut self, v: &EmittedVertex) {
        let mut m = self.mask;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            self.rows.push(v.outputs[r]);
            m &= m - 1;
        }
        self.flags
            .push(EmitFlags::new(v.slot, v.primitive, v.winding));
    }
}
