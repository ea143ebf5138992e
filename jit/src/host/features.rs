//! Host CPU features the code generator may use. Detected once, maskable (so lower tiers can be
//! tested on one machine) and part of the code-cache key, since they change the emitted code.

use std::fmt;

/// CPU features relevant to code generation, as a bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct HostFeatures(u32);

impl HostFeatures {
    /// x86-64: SSE4.1 (`blendps`, `roundps`, `pextrd`, `insertps`). The x64 backend's baseline.
    pub const SSE41: HostFeatures = HostFeatures(1 << 0);
    /// x86-64: AVX (VEX three-operand forms).
    pub const AVX: HostFeatures = HostFeatures(1 << 1);
    /// x86-64: AVX2.
    pub const AVX2: HostFeatures = HostFeatures(1 << 2);
    /// x86-64: FMA3. Code that must round a multiply-add twice never uses it; listed so that a
    /// host difference is visible in the cache key.
    pub const FMA: HostFeatures = HostFeatures(1 << 3);
    /// x86-64: LZCNT.
    pub const LZCNT: HostFeatures = HostFeatures(1 << 4);
    /// AArch64: Advanced SIMD (always present on AArch64).
    pub const NEON: HostFeatures = HostFeatures(1 << 16);

    /// No features.
    pub const fn empty() -> HostFeatures {
        HostFeatures(0)
    }

    /// Every feature bit (for generating code for another machine in tests).
    pub const fn all() -> HostFeatures {
        HostFeatures(0x1F | (1 << 16))
    }

    /// Raw bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// True if every feature in `other` is present.
    pub const fn contains(self, other: HostFeatures) -> bool {
        self.0 & other.0 == other.0
    }

    /// Both sets.
    pub const fn union(self, other: HostFeatures) -> HostFeatures {
        HostFeatures(self.0 | other.0)
    }

    /// This set without the features in `other` (to test lower tiers on a capable host).
    pub const fn without(self, other: HostFeatures) -> HostFeatures {
        HostFeatures(self.0 & !other.0)
    }

    /// The features to generate `backend` code with: the host's when the code is for this
    /// machine, otherwise that architecture's baseline (what a build for it could assume
    /// before detecting anything), for code that is only inspected or emulated.
    pub fn for_backend(backend: crate::host::Backend) -> HostFeatures {
        match backend {
            b if crate::host::Backend::host() == Some(b) => HostFeatures::detect(),
            crate::host::Backend::X64 => HostFeatures::SSE41,
            crate::host::Backend::A64 => HostFeatures::NEON,
        }
    }

    /// The features of the machine this process runs on.
    pub fn detect() -> HostFeatures {
        #[allow(unused_mut)]
        let mut f = HostFeatures::empty();
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("sse4.1") {
                f = f.union(HostFeatures::SSE41);
            }
            if std::arch::is_x86_feature_detected!("avx") {
                f = f.union(HostFeatures::AVX);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                f = f.union(HostFeatures::AVX2);
            }
            if std::arch::is_x86_feature_detected!("fma") {
                f = f.union(HostFeatures::FMA);
            }
            if std::arch::is_x86_feature_detected!("lzcnt") {
                f = f.union(HostFeatures::LZCNT);
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            f = f.union(HostFeatures::NEON);
        }
        f
    }
}

impl fmt::Display for HostFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (HostFeatures::SSE41, "sse4.1"),
            (HostFeatures::AVX, "avx"),
            (HostFeatures::AVX2, "avx2"),
            (HostFeatures::FMA, "fma"),
            (HostFeatures::LZCNT, "lzcnt"),
            (HostFeatures::NEON, "neon"),
        ];
        let mut first = true;
        for (feat, name) in names {
            if self.contains(feat) {
                if !first {
                    f.write_str(",")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}
