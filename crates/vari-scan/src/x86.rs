//! The x86-64 psABI level (`x86-64-v1` … `v4`) that machine code uses, found by decoding every
//! instruction of the executable sections with `iced-x86` and mapping the CPUID features each
//! instruction needs to the levels of `spec/hardware.md` §5.1:
//!
//! | level | features |
//! |---|---|
//! | v2 | CMPXCHG16B, LAHF-SAHF (in 64-bit mode), POPCNT, SSE3, SSE4_1, SSE4_2, SSSE3 |
//! | v3 | AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, OSXSAVE |
//! | v4 | AVX512F, AVX512BW, AVX512CD, AVX512DQ, AVX512VL |
//!
//! Two rules complete the table. **Encodings**: a VEX-encoded instruction needs the operating
//! system's AVX state (what OSXSAVE stands for: an OS capability, not an instruction), which first
//! appears at v3; an EVEX-encoded one needs the AVX-512 state of v4 — so `vpdpbusd zmm`
//! (AVX512_VNNI, in no level) counts as v4. **Probes**: `xgetbv` and `cpuid` are how code *asks*
//! whether the CPU has a feature, and are guarded by that very question; they count as evidence of
//! runtime dispatch, not as a level. Other XSAVE-family instructions (context saving, as in
//! `ld.so`'s trampolines) are likewise guarded and count for nothing. And `tzcnt` counts as
//! baseline: it is the `rep bsf` encoding that compilers emit for every x86-64 CPU.
//!
//! # Reading the result: "uses", not "requires"
//!
//! A linear sweep sees every instruction in the file, reachable or not. Code that picks an
//! implementation at run time (numpy's dispatch, OpenBLAS kernels, glibc-style IFUNC resolvers,
//! `__builtin_cpu_supports` branches) contains instructions of every level it supports, so its
//! level is the highest one *present*, which is what it **uses** on a CPU that has it, not what
//! it **requires**. [`X86Usage::runtime_dispatch`] records the evidence that this is happening
//! (a `cpuid` or `xgetbv` instruction, IFUNC symbols); a maintainer should read a high level with
//! such evidence as "has fast paths for vN" and a high level without it as "will crash below vN".
//! The remaining blind spot: dispatch decided in another file (a function pointer set by a module
//! that did the `cpuid`) looks like a hard requirement here.
//!
//! Bytes that are data inside an executable section (rare on x86-64: compilers put jump tables
//! and constants in `.rodata`) decode as whatever instructions they resemble.

use std::fmt;
use std::sync::LazyLock;

use iced_x86::{Code, CpuidFeature, Decoder, DecoderOptions, EncodingKind, Instruction, Mnemonic};

/// An x86-64 micro-architecture level (psABI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum X86Level {
    /// The x86-64 baseline (SSE2).
    V1 = 1,
    /// x86-64-v2 (Nehalem-class: SSE4.2, POPCNT).
    V2 = 2,
    /// x86-64-v3 (Haswell-class: AVX2, FMA, BMI).
    V3 = 3,
    /// x86-64-v4 (AVX-512 F/BW/CD/DQ/VL).
    V4 = 4,
}

impl X86Level {
    /// The value the `x86_64 :: level` feature uses: `v1` … `v4`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V2 => "v2",
            Self::V3 => "v3",
            Self::V4 => "v4",
        }
    }

    fn from_number(n: u8) -> Self {
        match n {
            0 | 1 => Self::V1,
            2 => Self::V2,
            3 => Self::V3,
            _ => Self::V4,
        }
    }

    /// Parses `v1` … `v4`.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "v1" => Self::V1,
            "v2" => Self::V2,
            "v3" => Self::V3,
            "v4" => Self::V4,
            _ => return None,
        })
    }
}

impl fmt::Display for X86Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first instruction found that needs an instruction-set extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionUse {
    /// The extension, in the x86_64 provider's spelling where it has one (`avx512f`, `sha_ni`,
    /// `cx16`, `abm` for LZCNT), else lower-case CPUID naming (`avx512_fp16`).
    pub extension: String,
    /// The instruction's mnemonic (`vpaddd`).
    pub mnemonic: String,
    /// Its virtual address in the file.
    pub address: u64,
    /// The function symbol it lies in, when the file has one for it.
    pub symbol: Option<String>,
}

impl fmt::Display for ExtensionUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} at {:#x}",
            self.extension, self.mnemonic, self.address
        )?;
        if let Some(symbol) = &self.symbol {
            write!(f, " in {symbol}")?;
        }
        f.write_str(")")
    }
}

/// Evidence that a file chooses code paths by asking the CPU at run time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeDispatch {
    /// Address of the first `cpuid` instruction.
    pub cpuid_at: Option<u64>,
    /// Address of the first `xgetbv` instruction (the check for OS support of AVX state).
    pub xgetbv_at: Option<u64>,
    /// Number of IFUNC symbols (functions whose implementation a resolver picks at load time).
    pub ifunc_symbols: usize,
}

impl fmt::Display for RuntimeDispatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(a) = self.cpuid_at {
            parts.push(format!("cpuid at {a:#x}"));
        }
        if let Some(a) = self.xgetbv_at {
            parts.push(format!("xgetbv at {a:#x}"));
        }
        if self.ifunc_symbols > 0 {
            parts.push(format!("{} IFUNC symbols", self.ifunc_symbols));
        }
        f.write_str(&parts.join(", "))
    }
}

/// What the x86-64 code of one file uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X86Usage {
    /// The highest level among all decoded instructions (see the module docs: "uses").
    pub level: X86Level,
    /// The instruction that first raised the level to [`level`](Self::level) (`None` at v1).
    pub forced_by: Option<ExtensionUse>,
    /// Extensions that no psABI level includes (`aes`, `sha_ni`, `avx512_vnni`, `avx_vnni`, …),
    /// each with its first use; a CPU of the reported level may lack them.
    pub beyond_levels: Vec<ExtensionUse>,
    /// Evidence of runtime dispatch, if any was found.
    pub runtime_dispatch: Option<RuntimeDispatch>,
    /// How many instructions were decoded.
    pub instructions: u64,
}

/// Per `Code`: what one instruction of that code means for the scan. Precomputed once for all
/// ~5,000 codes so that the decoding loop does one table load per instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CodeClass {
    /// The psABI level the instruction needs (1–4).
    level: u8,
    /// The feature to name when this instruction sets the level.
    level_feature: Option<Named>,
    /// An extension outside every level, to report.
    beyond: Option<CpuidFeature>,
    probe: Probe,
}

impl CodeClass {
    /// Whether the decoding loop must look closer at an instruction of this class, given the
    /// level found so far. Beyond-level extensions and probes are rare enough to check each time.
    #[inline(always)]
    fn noteworthy(self, current: u8) -> bool {
        self.level > current || self.beyond.is_some() || self.probe != Probe::None
    }
}

/// A feature name for a level-setting instruction: a CPUID feature, or a rule of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Named {
    Feature(CpuidFeature),
    LahfSahf,
    VexEncoding,
    EvexEncoding,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    None,
    Cpuid,
    Xgetbv,
}

/// The psABI level of a CPUID feature, for the features the levels are defined by.
fn psabi_level(feature: CpuidFeature) -> Option<u8> {
    use CpuidFeature::*;
    Some(match feature {
        CMPXCHG16B | POPCNT | SSE3 | SSE4_1 | SSE4_2 | SSSE3 => 2,
        AVX | AVX2 | BMI1 | BMI2 | F16C | FMA | LZCNT | MOVBE => 3,
        AVX512F | AVX512BW | AVX512CD | AVX512DQ | AVX512VL => 4,
        _ => return None,
    })
}

/// User-mode extensions outside every level that a maintainer may need to know about. Features
/// not listed are either in the v1 baseline, hints that older CPUs execute as no-ops (`endbr64`,
/// `bnd`, `xacquire`, `prefetchw`), or privileged.
fn beyond_levels(feature: CpuidFeature) -> bool {
    use CpuidFeature::*;
    matches!(
        feature,
        ADX | AES
            | AMX_BF16
            | AMX_COMPLEX
            | AMX_FP16
            | AMX_INT8
            | AMX_TILE
            | AVX512_4FMAPS
            | AVX512_4VNNIW
            | AVX512_BF16
            | AVX512_BITALG
            | AVX512_FP16
            | AVX512_IFMA
            | AVX512_VBMI
            | AVX512_VBMI2
            | AVX512_VNNI
            | AVX512_VP2INTERSECT
            | AVX512_VPOPCNTDQ
            | AVX512ER
            | AVX512PF
            | AVX_IFMA
            | AVX_NE_CONVERT
            | AVX_VNNI
            | AVX_VNNI_INT8
            | AVX_VNNI_INT16
            | CLDEMOTE
            | CLFLUSHOPT
            | CLWB
            | CLZERO
            | CMPCCXADD
            | D3NOW
            | D3NOWEXT
            | ENQCMD
            | FMA4
            | FSGSBASE
            | GFNI
            | KL
            | AESKLE
            | WIDE_KL
            | MOVDIR64B
            | MOVDIRI
            | PCLMULQDQ
            | PKU
            | PTWRITE
            | RAO_INT
            | RDPID
            | RDRAND
            | RDSEED
            | RTM
            | SERIALIZE
            | SHA
            | SHA512
            | SM3
            | SM4
            | SSE4A
            | TBM
            | TSXLDTRK
            | UINTR
            | VAES
            | VPCLMULQDQ
            | WAITPKG
            | XOP
    )
}

/// The provider's (archspec's `/proc/cpuinfo`) name of a feature where it differs from iced's.
fn feature_name(feature: CpuidFeature) -> String {
    use CpuidFeature::*;
    match feature {
        SHA => "sha_ni".into(),
        AVX512_IFMA => "avx512ifma".into(),
        AVX512_VBMI => "avx512vbmi".into(),
        CMPXCHG16B => "cx16".into(),
        LZCNT => "abm".into(),
        D3NOW => "3dnow".into(),
        D3NOWEXT => "3dnowext".into(),
        other => format!("{other:?}").to_ascii_lowercase(),
    }
}

fn named(n: Named) -> String {
    match n {
        Named::Feature(f) => feature_name(f),
        Named::LahfSahf => "lahf_lm".into(),
        Named::VexEncoding => "avx".into(),
        Named::EvexEncoding => "avx512f".into(),
    }
}

fn classify(code: Code) -> CodeClass {
    // `tzcnt` is `rep bsf`: a CPU without BMI1 runs it as `bsf`, which gives the same result for
    // any non-zero input, and GCC emits it for baseline x86-64 for that reason. The encoding
    // cannot tell the two intents apart, so it counts as baseline. (`lzcnt`, `rep bsr`, gives
    // a different result as `bsr` and is never emitted for older CPUs: it counts.)
    let features = if code.mnemonic() == Mnemonic::Tzcnt {
        &[]
    } else {
        code.cpuid_features()
    };
    let mut level = 1;
    let mut level_feature = None;
    // The last feature of the highest level: iced lists AVX512VL before AVX512F/BW/DQ, and the
    // latter say more.
    for &f in features {
        if let Some(l) = psabi_level(f) {
            if l >= level {
                level = l;
                level_feature = Some(Named::Feature(f));
            }
        }
    }
    // LAHF/SAHF are 8086 instructions, but 64-bit mode has them only with CPUID LAHF-SAHF (v2).
    if matches!(code, Code::Lahf | Code::Sahf) && level < 2 {
        level = 2;
        level_feature = Some(Named::LahfSahf);
    }
    let floor = match code.encoding() {
        EncodingKind::VEX => Some((3, Named::VexEncoding)),
        EncodingKind::EVEX | EncodingKind::MVEX => Some((4, Named::EvexEncoding)),
        _ => None,
    };
    if let Some((floor, name)) = floor {
        if floor > level {
            level = floor;
            level_feature = Some(name);
        }
    }
    let probe = match code {
        Code::Cpuid => Probe::Cpuid,
        Code::Xgetbv => Probe::Xgetbv,
        _ => Probe::None,
    };
    CodeClass {
        level,
        level_feature,
        beyond: features.iter().copied().find(|&f| beyond_levels(f)),
        probe,
    }
}

/// The class of every `Code`, indexed by `Code as usize`.
static CODE_CLASSES: LazyLock<Vec<CodeClass>> =
    LazyLock::new(|| Code::values().map(classify).collect());

/// Decodes x86-64 code and keeps what it uses. One scanner per file: feed it every executable
/// section, then [`finish`](Self::finish).
pub(crate) struct X86Scanner {
    level: u8,
    forced_by: Option<(Named, Code, u64)>,
    beyond: Vec<(CpuidFeature, Code, u64)>,
    cpuid_at: Option<u64>,
    xgetbv_at: Option<u64>,
    instructions: u64,
    instruction: Instruction,
}

impl X86Scanner {
    pub(crate) fn new() -> Self {
        Self {
            level: 1,
            forced_by: None,
            beyond: Vec::new(),
            cpuid_at: None,
            xgetbv_at: None,
            instructions: 0,
            instruction: Instruction::default(),
        }
    }

    /// Decodes `bytes`, loaded at virtual address `address`.
    pub(crate) fn scan(&mut self, bytes: &[u8], address: u64) {
        let classes: &[CodeClass] = &CODE_CLASSES;
        let mut decoder = Decoder::with_ip(64, bytes, address, DecoderOptions::NONE);
        let mut count = 0u64;
        while decoder.can_decode() {
            decoder.decode_out(&mut self.instruction);
            count += 1;
            let class = classes[self.instruction.code() as usize];
            if class.noteworthy(self.level) {
                self.note(class);
            }
        }
        self.instructions += count;
    }

    #[cold]
    fn note(&mut self, class: CodeClass) {
        let code = self.instruction.code();
        let ip = self.instruction.ip();
        if class.level > self.level {
            self.level = class.level;
            self.forced_by = class.level_feature.map(|n| (n, code, ip));
        }
        if let Some(f) = class.beyond {
            if !self.beyond.iter().any(|&(seen, _, _)| seen == f) {
                self.beyond.push((f, code, ip));
            }
        }
        match class.probe {
            Probe::Cpuid if self.cpuid_at.is_none() => self.cpuid_at = Some(ip),
            Probe::Xgetbv if self.xgetbv_at.is_none() => self.xgetbv_at = Some(ip),
            _ => {}
        }
    }

    /// The usage found, with `symbol_at` naming the function around an address and
    /// `ifunc_symbols` the number of IFUNC symbols in the file.
    pub(crate) fn finish(
        self,
        symbol_at: impl Fn(u64) -> Option<String>,
        ifunc_symbols: usize,
    ) -> X86Usage {
        let use_of = |extension: String, code: Code, address: u64| ExtensionUse {
            extension,
            mnemonic: format!("{:?}", code.mnemonic()).to_ascii_lowercase(),
            address,
            symbol: symbol_at(address),
        };
        let dispatch = RuntimeDispatch {
            cpuid_at: self.cpuid_at,
            xgetbv_at: self.xgetbv_at,
            ifunc_symbols,
        };
        X86Usage {
            level: X86Level::from_number(self.level),
            forced_by: self.forced_by.map(|(n, c, a)| use_of(named(n), c, a)),
            beyond_levels: self
                .beyond
                .iter()
                .map(|&(f, c, a)| use_of(feature_name(f), c, a))
                .collect(),
            runtime_dispatch: (dispatch != RuntimeDispatch::default()).then_some(dispatch),
            instructions: self.instructions,
        }
    }
}

#[cfg(test)]
mod tests;
