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

/// Thread-safe compiled-shader cache. Compile failures are cached too, so a shader that falls
/// back to the interpreter is analysed once.
#[derive(Default)]
pub struct CodeCache {
    map: Mutex<HashMap<CacheKey, Result<Arc<CompiledShader>, CompileError>>>,
}

impl CodeCache {
    /// An empty cache.
    pub fn new() -> CodeCache {
        CodeCache::default()
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
        if let Some(r) = self.map.lock().map_err(poisoned)?.get(&key) {
            return r.clone();
        }
        let r = compile_with_options(program, mode, backend, features, options).map(Arc::new);
        self.map.lock().map_err(poisoned)?.insert(key, r.clone());
        r
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drop every entry.
    pub fn clear(&self) {
        if let Ok(mut m) = self.map.lock() {
            m.clear();
        }
    }
}

fn poisoned<T>(_: T) -> CompileError {
    CompileError::Internal("code cache lock poisoned".into())
}
