//! A cache of compiled shaders keyed by everything that changes the generated code: the
//! reachable code words and the descriptors they use (so unrelated parts of a shared program
//! memory do not split entries), the entry point, the shader kind, the float mode, the MAX
//! reading, the backend, the CPU features and the NEON lanes per multi-vertex body run.

use crate::error::CompileError;
use crate::host::features::HostFeatures;
use crate::host::Backend;
use crate::pica::a64::A64Lanes;
use crate::pica::analysis::Analysis;
use crate::pica::shader::{compile_with_options, CompileOptions, CompiledShader};
use picajit_interp::pica::float::{FloatMode, MaxRule};
use picajit_interp::pica::program::{Program, ShaderKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Identity of generated code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// `(address, word)` of every reachable instruction.
    pub words: Vec<(u32, u32)>,
    /// `(index, descriptor)` of every descriptor a reachable instruction uses.
    pub descriptors: Vec<(u8, u64)>,
    /// Entry point.
    pub entry: u16,
    /// Vertex or geometry.
    pub kind: ShaderKind,
    /// Float mode.
    pub mode: FloatMode,
    /// MAX reading.
    pub max_rule: MaxRule,
    /// Target.
    pub backend: Backend,
    /// Features the code may use.
    pub features: HostFeatures,
    /// Lanes per run of the NEON multi-vertex body.
    pub a64_lanes: A64Lanes,
}

impl CacheKey {
    /// The key of `program` compiled with these settings (runs the analysis).
    pub fn new(
        program: &Program,
        mode: FloatMode,
        backend: Backend,
        features: HostFeatures,
    ) -> Result<CacheKey, CompileError> {
        let a = Analysis::new(program)?;
        Ok(CacheKey {
            words: a
                .reachable
                .iter()
                .map(|&pc| (pc, program.code()[pc as usize]))
                .collect(),
            descriptors: a
                .descriptors
                .iter()
                .map(|&d| (d, program.opdesc(d as usize)))
                .collect(),
            entry: program.entry(),
            kind: program.kind(),
            mode,
            max_rule: MaxRule::default(),
            backend,
            features,
            a64_lanes: A64Lanes::default(),
        })
    }
}

/// Default [`CodeCache`] budget: 64 MiB. A game's shaders compile to well under 1 MiB in
/// all (tens of programs of a few KiB of code and metadata each), so an emulator switching
/// between games keeps several games' code; a session that loads tens of thousands of
/// distinct programs stays at this size instead of growing by about 9 KiB per program.
pub const DEFAULT_CACHE_BUDGET: usize = 64 << 20;

/// Usage figures of a [`CodeCache`] ([`CodeCache::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found their code (or their cached compile failure).
    pub hits: u64,
    /// Lookups that compiled.
    pub misses: u64,
    /// Entries dropped to stay within the budget.
    pub evictions: u64,
    /// Entries now held.
    pub entries: usize,
    /// Bytes now counted ([`CompiledShader::footprint`] plus each key).
    pub bytes: usize,
    /// The budget in bytes.
    pub budget: usize,
    /// Time spent measuring entries and evicting, in total.
    pub eviction_time: std::time::Duration,
}

struct Entry {
    value: Result<Arc<CompiledShader>, CompileError>,
    /// Bytes fixed at insertion: the key, the map slot and the compiled code but its
    /// multi-vertex code (or the error's message).
    base: usize,
    /// Bytes counted for it when last measured.
    bytes: usize,
    /// Lookup counter value at its last use.
    used: u64,
}

impl Entry {
    fn new(key: &CacheKey, value: Result<Arc<CompiledShader>, CompileError>, used: u64) -> Entry {
        let key_bytes = std::mem::size_of::<(CacheKey, Entry)>()
            + key.words.capacity() * std::mem::size_of::<(u32, u32)>()
            + key.descriptors.capacity() * std::mem::size_of::<(u8, u64)>();
        let base = key_bytes
            + match &value {
                Ok(code) => code.fixed_footprint(),
                Err(e) => e.to_string().len(),
            };
        Entry {
            value,
            base,
            bytes: 0,
            used,
        }
    }

    /// What it counts now: the fixed part plus the multi-vertex code generated so far (on a
    /// shader's first batch, after insertion), which is cheap to ask for, so every
    /// compilation re-measures every entry in time linear in the entries, not their code.
    fn measure(&self) -> usize {
        self.base
            + match &self.value {
                Ok(code) => code.lane_footprint(),
                Err(_) => 0,
            }
    }

    /// A running shader holds it: dropping it here would free nothing.
    fn held(&self) -> bool {
        matches!(&self.value, Ok(code) if Arc::strong_count(code) > 1)
    }
}

#[derive(Default)]
struct State {
    map: HashMap<CacheKey, Entry>,
    bytes: usize,
    budget: usize,
    clock: u64,
    stats: CacheStats,
}

impl State {
    /// Re-measure every entry (multi-vertex code is generated after insertion, on a
    /// shader's first batch) and drop the least recently used entries no shader holds
    /// until the total is within 7/8 of the budget. Returns the dropped code, to be freed after
    /// the lock is released.
    fn evict(&mut self) -> Vec<Entry> {
        let start = std::time::Instant::now();
        let mut total = 0;
        for e in self.map.values_mut() {
            e.bytes = e.measure();
            total += e.bytes;
        }
        self.bytes = total;
        let mut dropped = Vec::new();
        if self.bytes > self.budget {
            // Down to 7/8 of the budget: the sort then runs once per many compilations
            // instead of on every one once the cache is full.
            let target = self.budget - self.budget / 8;
            let mut free: Vec<(u64, &CacheKey, usize)> = self
                .map
                .iter()
                .filter(|(_, e)| !e.held())
                .map(|(k, e)| (e.used, k, e.bytes))
                .collect();
            free.sort_unstable_by_key(|&(used, _, _)| used);
            let mut excess = self.bytes - target;
            let mut victims = Vec::new();
            for (_, key, bytes) in free {
                if excess == 0 {
                    break;
                }
                victims.push(key.clone());
                excess = excess.saturating_sub(bytes);
            }
            for key in victims {
                if let Some(e) = self.map.remove(&key) {
                    self.bytes -= e.bytes;
                    self.stats.evictions += 1;
                    dropped.push(e);
                }
            }
        }
        self.stats.eviction_time += start.elapsed();
        dropped
    }
}

/// Thread-safe compiled-shader cache with a byte budget. Compile failures are cached too, so
/// a shader that falls back to the interpreter is analysed once.
///
/// Every entry counts its [`CompiledShader::footprint`] (code, metadata, multi-vertex code
/// once generated) and its key against the budget ([`DEFAULT_CACHE_BUDGET`] unless set).
/// When a compilation takes the total past it, the least recently used entries that no
/// shader holds are dropped until it is within 7/8 of it; entries that shaders hold stay
/// (dropping them would free nothing) and become droppable when the last such shader is
/// dropped. So the memory of code no shader uses stays under the budget, and what shaders in
/// use hold comes on top of it.
///
/// Clones share the same entries (a `picajit` shader keeps one to compile
/// its other entry points into the same budget).
#[derive(Clone)]
pub struct CodeCache {
    state: Arc<Mutex<State>>,
}

impl Default for CodeCache {
    fn default() -> Self {
        CodeCache::with_budget(DEFAULT_CACHE_BUDGET)
    }
}

impl std::fmt::Debug for CodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CodeCache({:?})", self.stats())
    }
}

impl CodeCache {
    /// An empty cache with the [`DEFAULT_CACHE_BUDGET`].
    pub fn new() -> CodeCache {
        CodeCache::default()
    }

    /// An empty cache holding at most `budget` bytes of code no shader uses (0 keeps
    /// nothing that no shader holds).
    pub fn with_budget(budget: usize) -> CodeCache {
        CodeCache {
            state: Arc::new(Mutex::new(State {
                budget,
                stats: CacheStats {
                    budget,
                    ..CacheStats::default()
                },
                ..State::default()
            })),
        }
    }

    /// Change the budget; entries past it are dropped now.
    pub fn set_budget(&self, budget: usize) {
        let dropped = {
            let mut s = self.lock();
            s.budget = budget;
            s.stats.budget = budget;
            s.evict()
        };
        drop(dropped);
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.lock().budget
    }

    /// Hits, misses, evictions and the bytes now counted.
    pub fn stats(&self) -> CacheStats {
        let s = self.lock();
        CacheStats {
            entries: s.map.len(),
            bytes: s.bytes,
            ..s.stats
        }
    }

    /// The lock; a poisoned one only means a thread panicked while holding it, and every
    /// update leaves the state consistent before anything that can panic.
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The compiled shader for these settings, compiling it on a miss.
    pub fn get_or_compile(
        &self,
        program: &Program,
        mode: FloatMode,
        backend: Backend,
        features: HostFeatures,
    ) -> Result<Arc<CompiledShader>, CompileError> {
        self.get_or_compile_with(program, mode, MaxRule::default(), backend, features)
    }

    /// [`Self::get_or_compile`] for the MAX reading `max_rule`.
    pub fn get_or_compile_with(
        &self,
        program: &Program,
        mode: FloatMode,
        max_rule: MaxRule,
        backend: Backend,
        features: HostFeatures,
    ) -> Result<Arc<CompiledShader>, CompileError> {
        let options = CompileOptions {
            max_rule,
            ..CompileOptions::default()
        };
        self.get_or_compile_with_options(program, mode, backend, features, options)
    }

    /// [`Self::get_or_compile`] with every setting of [`CompileOptions`].
    pub fn get_or_compile_with_options(
        &self,
        program: &Program,
        mode: FloatMode,
        backend: Backend,
        features: HostFeatures,
        options: CompileOptions,
    ) -> Result<Arc<CompiledShader>, CompileError> {
        let key = CacheKey {
            max_rule: options.max_rule,
            a64_lanes: options.a64_lanes,
            ..CacheKey::new(program, mode, backend, features)?
        };
        {
            let mut s = self.lock();
            s.clock += 1;
            let now = s.clock;
            if let Some(e) = s.map.get_mut(&key) {
                e.used = now;
                let r = e.value.clone();
                s.stats.hits += 1;
                return r;
            }
            s.stats.misses += 1;
        }
        // Compiled without the lock: other programs' lookups go on meanwhile.
        let r = compile_with_options(program, mode, backend, features, options).map(Arc::new);
        let dropped = {
            let mut s = self.lock();
            s.clock += 1;
            let used = s.clock;
            let entry = Entry::new(&key, r.clone(), used);
            // Another thread may have compiled the same key meanwhile: its entry stays.
            s.map.entry(key).or_insert(entry);
            s.evict()
        };
        drop(dropped);
        r
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drop every entry (shaders that exist keep their code).
    pub fn clear(&self) {
        let dropped = {
            let mut s = self.lock();
            s.bytes = 0;
            std::mem::take(&mut s.map)
        };
        drop(dropped);
    }
}
