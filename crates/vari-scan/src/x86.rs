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
//! system's AVX state (what OSXSAVE stands for: an OS capability, not an instruction), so it
//! counts as AVX; an EVEX-encoded one needs the AVX-512 state, so it counts as AVX512F — so
//! `vpdpbusd zmm` (AVX512_VNNI, in no level) counts as v4. **Probes**: `xgetbv` and `cpuid` are
//! how code *asks* whether the CPU has a feature, and are guarded by that very question; they
//! count as evidence of runtime dispatch, not as a level. Other XSAVE-family instructions (context
//! saving, as in `ld.so`'s trampolines) are likewise guarded and count for nothing. And `tzcnt`
//! counts as baseline: it is the `rep bsf` encoding that compilers emit for every x86-64 CPU.
//!
//! # Reading the result: "uses", not "requires"
//!
//! A linear sweep sees every instruction in the file, reachable or not. Code that picks an
//! implementation at run time contains instructions of every level it supports, so its level is
//! the highest one *present*, which is what it **uses** on a CPU that has it, not what it
//! **requires**. [`X86Usage::required_level`] is what it requires, and it says "unknown"
//! (`None`) rather than a level that would be wrong either way, in two cases:
//!
//! 1. **Runtime dispatch** ([`X86Usage::runtime_dispatch`]): the file asks the CPU, so its
//!    highest level may be a fast path. What compilers and libraries really emit for that, all
//!    recognised:
//!    - a `cpuid` or `xgetbv` instruction: hand-written probes (OpenBLAS's and oneDNN's CPU
//!      detection, numpy's dispatch), and libgcc's `__cpu_indicator_init` where it is linked in
//!      statically (GCC links it into every shared object that uses `__builtin_cpu_supports` or
//!      `target_clones`);
//!    - IFUNC symbols (`STT_GNU_IFUNC`): `target_clones` resolvers and hand-written
//!      `__attribute__((ifunc))` ones, which pick an implementation at load time;
//!    - a reference to a CPU feature record that another library fills in
//!      ([`CPU_FEATURE_SYMBOLS`]): `__cpu_model`, `__cpu_features2`, `__cpu_indicator_init`
//!      (libgcc and compiler-rt: what `__builtin_cpu_supports` reads), glibc's
//!      `__x86_get_cpuid_feature_leaf` (`<sys/platform/x86.h>`), the Intel compilers'
//!      `__intel_cpu_feature_indicator`. A library linked against `libgcc_s.so.1` (libgfortran as
//!      numpy bundles it) reads `__cpu_model` there and has no `cpuid` of its own: the undefined
//!      symbol is the only sign.
//!
//!    The blind spot left: dispatch decided in another file, through a function pointer.
//! 2. **Part of a level** ([`X86Usage::partial_level`]): a real CPU below the level has every
//!    level feature the code uses — a `-mavx` build, as jax's plugins are, runs on Ivy Bridge,
//!    which is `v2` — so the code needs more than the level below and less than its own, and no
//!    level says that. The CPUs are in [`CPUS_BELOW_LEVELS`]; what `-march=x86-64-vN` builds of
//!    real code contain (AVX2 and BMI2 for `v3`, SSE4.1 with POPCNT for `v2`) rules every one of
//!    them out, so such builds keep their level.
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
    /// The first CPU feature record or probe function of another library that the file
    /// references ([`CPU_FEATURE_SYMBOLS`]: `__cpu_model`, …).
    pub feature_record: Option<String>,
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
        if let Some(symbol) = &self.feature_record {
            parts.push(format!("reads {symbol}"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// What the x86-64 code of one file uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X86Usage {
    /// The highest level among all decoded instructions (see the module docs: "uses").
    pub level: X86Level,
    /// The first use of a feature of [`level`](Self::level) (`None` at v1).
    pub forced_by: Option<ExtensionUse>,
    /// Extensions that no psABI level includes (`aes`, `sha_ni`, `avx512_vnni`, `avx_vnni`, …),
    /// each with its first use; a CPU of the reported level may lack them.
    pub beyond_levels: Vec<ExtensionUse>,
    /// A real CPU below [`level`](Self::level) that has every level feature the code uses: the
    /// code uses part of its level only (see the module docs).
    pub partial_level: Option<CpuBelowLevel>,
    /// Evidence of runtime dispatch, if any was found.
    pub runtime_dispatch: Option<RuntimeDispatch>,
    /// How many instructions were decoded.
    pub instructions: u64,
}

impl X86Usage {
    /// The level the code requires: its [`level`](Self::level), or `None` ("unknown") when it
    /// checks the CPU at run time or uses only part of its level (see the module docs: no level
    /// rather than a wrong one).
    pub fn required_level(&self) -> Option<X86Level> {
        (self.runtime_dispatch.is_none() && self.partial_level.is_none()).then_some(self.level)
    }
}

/// The symbols of CPU feature records and probes that another library (or the dynamic loader)
/// fills in: a file that references one, defined or not, chooses code by CPU at run time (see
/// the module docs).
pub const CPU_FEATURE_SYMBOLS: &[&str] = &[
    // libgcc and compiler-rt: what `__builtin_cpu_supports`/`__builtin_cpu_is` read and
    // `target_clones` resolvers call.
    "__cpu_model",
    "__cpu_features2",
    "__cpu_indicator_init",
    // glibc: `<sys/platform/x86.h>` (2.33 and later), and the private accessors before it.
    "__x86_get_cpuid_feature_leaf",
    "__x86_get_cpu_features",
    "__get_cpu_features",
    // The Intel compilers' `-ax` multi-versioning.
    "__intel_cpu_feature_indicator",
    "__intel_cpu_feature_indicator_x",
    "__intel_cpu_features_init",
    "__intel_cpu_features_init_x",
];

/// One psABI level feature: its bit in a feature set, level and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LevelFeature {
    level: u8,
    /// The x86_64 provider's spelling (archspec's `/proc/cpuinfo` names).
    name: &'static str,
}

/// The features the levels are defined by; a feature's bit in a set is its index here.
const LEVEL_FEATURES: [LevelFeature; 20] = [
    LevelFeature {
        level: 2,
        name: "cx16",
    },
    LevelFeature {
        level: 2,
        name: "lahf_lm",
    },
    LevelFeature {
        level: 2,
        name: "popcnt",
    },
    LevelFeature {
        level: 2,
        name: "sse3",
    },
    LevelFeature {
        level: 2,
        name: "sse4_1",
    },
    LevelFeature {
        level: 2,
        name: "sse4_2",
    },
    LevelFeature {
        level: 2,
        name: "ssse3",
    },
    LevelFeature {
        level: 3,
        name: "avx",
    },
    LevelFeature {
        level: 3,
        name: "avx2",
    },
    LevelFeature {
        level: 3,
        name: "bmi1",
    },
    LevelFeature {
        level: 3,
        name: "bmi2",
    },
    LevelFeature {
        level: 3,
        name: "f16c",
    },
    LevelFeature {
        level: 3,
        name: "fma",
    },
    LevelFeature {
        level: 3,
        name: "abm",
    },
    LevelFeature {
        level: 3,
        name: "movbe",
    },
    LevelFeature {
        level: 4,
        name: "avx512f",
    },
    LevelFeature {
        level: 4,
        name: "avx512bw",
    },
    LevelFeature {
        level: 4,
        name: "avx512cd",
    },
    LevelFeature {
        level: 4,
        name: "avx512dq",
    },
    LevelFeature {
        level: 4,
        name: "avx512vl",
    },
];

const CX16: u32 = 1 << 0;
const LAHF: u32 = 1 << 1;
const POPCNT: u32 = 1 << 2;
const SSE3: u32 = 1 << 3;
const SSE4_1: u32 = 1 << 4;
const SSE4_2: u32 = 1 << 5;
const SSSE3: u32 = 1 << 6;
const AVX: u32 = 1 << 7;
const AVX2: u32 = 1 << 8;
const BMI1: u32 = 1 << 9;
const BMI2: u32 = 1 << 10;
const F16C: u32 = 1 << 11;
const FMA: u32 = 1 << 12;
const LZCNT: u32 = 1 << 13;
const MOVBE: u32 = 1 << 14;
const AVX512F: u32 = 1 << 15;
const AVX512BW: u32 = 1 << 16;
const AVX512CD: u32 = 1 << 17;
const AVX512DQ: u32 = 1 << 18;
const AVX512VL: u32 = 1 << 19;

/// All of `v2`'s features.
const V2: u32 = CX16 | LAHF | POPCNT | SSE3 | SSE4_1 | SSE4_2 | SSSE3;

/// The bit of a CPUID feature the levels are defined by.
fn psabi_bit(feature: CpuidFeature) -> Option<u32> {
    use CpuidFeature as F;
    Some(match feature {
        F::CMPXCHG16B => CX16,
        F::POPCNT => POPCNT,
        F::SSE3 => SSE3,
        F::SSE4_1 => SSE4_1,
        F::SSE4_2 => SSE4_2,
        F::SSSE3 => SSSE3,
        F::AVX => AVX,
        F::AVX2 => AVX2,
        F::BMI1 => BMI1,
        F::BMI2 => BMI2,
        F::F16C => F16C,
        F::FMA => FMA,
        F::LZCNT => LZCNT,
        F::MOVBE => MOVBE,
        F::AVX512F => AVX512F,
        F::AVX512BW => AVX512BW,
        F::AVX512CD => AVX512CD,
        F::AVX512DQ => AVX512DQ,
        F::AVX512VL => AVX512VL,
        _ => return None,
    })
}

/// The psABI level of a CPUID feature, for the features the levels are defined by.
#[cfg(test)]
fn psabi_level(feature: CpuidFeature) -> Option<u8> {
    psabi_bit(feature).map(|bit| LEVEL_FEATURES[bit.trailing_zeros() as usize].level)
}

/// The highest level of the features in `set` (1 for none).
fn level_of(set: u32) -> u8 {
    LEVEL_FEATURES
        .iter()
        .enumerate()
        .filter(|&(i, _)| set & (1 << i) != 0)
        .map(|(_, f)| f.level)
        .max()
        .unwrap_or(1)
}

/// A real CPU below a level that has some of that level's features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuBelowLevel {
    /// Its name (`Intel Sandy Bridge`).
    pub name: &'static str,
    /// The level it has in full (`v2`).
    pub level: X86Level,
    /// Its level features, as a set of `LEVEL_FEATURES` bits.
    features: u32,
}

impl fmt::Display for CpuBelowLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, an x86-64-{} CPU", self.name, self.level)
    }
}

/// Real CPUs that have part of the next level: code that uses no level feature beyond one of
/// these runs there, so labelling it with the higher level would shut out CPUs it runs on. Each
/// lacks something every `-march=x86-64-vN` build of real code uses (POPCNT with SSE4.1 or SSSE3
/// for `v2`, AVX2 or BMI2 for `v3`). None is listed below `v4`: the one CPU with part of it,
/// Intel's Knights Landing accelerator (AVX512F and CD without BW, DQ, VL; discontinued in
/// 2019), runs most `-march=x86-64-v4` builds (GCC's vectorised loops are AVX512F alone), and a
/// `v4` label only keeps those builds off it, where the `v3` build runs.
pub const CPUS_BELOW_LEVELS: &[CpuBelowLevel] = &[
    CpuBelowLevel {
        name: "AMD K10",
        level: X86Level::V1,
        features: CX16 | LAHF | POPCNT | SSE3 | LZCNT,
    },
    CpuBelowLevel {
        name: "Intel Penryn",
        level: X86Level::V1,
        features: CX16 | LAHF | SSE3 | SSSE3 | SSE4_1,
    },
    CpuBelowLevel {
        name: "Intel Bonnell (Atom)",
        level: X86Level::V1,
        features: CX16 | LAHF | SSE3 | SSSE3 | MOVBE,
    },
    CpuBelowLevel {
        name: "Intel Ivy Bridge",
        level: X86Level::V2,
        features: V2 | AVX | F16C,
    },
    CpuBelowLevel {
        name: "AMD Piledriver",
        level: X86Level::V2,
        features: V2 | AVX | FMA | F16C | BMI1 | LZCNT,
    },
    CpuBelowLevel {
        name: "AMD Jaguar",
        level: X86Level::V2,
        features: V2 | AVX | F16C | BMI1 | LZCNT | MOVBE,
    },
];

/// The first CPU of [`CPUS_BELOW_LEVELS`] below the level of `used` that has all of `used`.
fn cpu_below_level(used: u32) -> Option<CpuBelowLevel> {
    let level = level_of(used);
    CPUS_BELOW_LEVELS
        .iter()
        .find(|cpu| (cpu.level as u8) < level && used & !cpu.features == 0)
        .copied()
}

/// Per `Code`: what one instruction of that code means for the scan. Precomputed once for all
/// ~5,000 codes so that the decoding loop does one table load per instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CodeClass {
    /// The level features the instruction needs, encoding rules included.
    features: u32,
    /// The feature to name when this instruction is the first to use `features`: of the highest
    /// level, the one iced lists last (iced lists AVX512VL before AVX512F/BW/DQ, which say more),
    /// a CPUID feature before an encoding rule.
    named: Option<u8>,
    /// An extension outside every level, to report.
    beyond: Option<CpuidFeature>,
    probe: Probe,
}

impl CodeClass {
    /// Whether the decoding loop must look closer at an instruction of this class, given the
    /// level features seen so far. Beyond-level extensions and probes are rare enough to check
    /// each time.
    #[inline(always)]
    fn noteworthy(self, seen: u32) -> bool {
        self.features & !seen != 0 || self.beyond.is_some() || self.probe != Probe::None
    }

    /// The psABI level the instruction needs (1–4).
    #[cfg(test)]
    fn level(self) -> u8 {
        level_of(self.features)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    None,
    Cpuid,
    Xgetbv,
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

/// The index in [`LEVEL_FEATURES`] of the one feature in `bit`.
fn index(bit: u32) -> u8 {
    bit.trailing_zeros() as u8
}

fn classify(code: Code) -> CodeClass {
    // `tzcnt` is `rep bsf`: a CPU without BMI1 runs it as `bsf`, which gives the same result for
    // any non-zero input, and GCC emits it for baseline x86-64 for that reason. The encoding
    // cannot tell the two intents apart, so it counts as baseline. (`lzcnt`, `rep bsr`, gives
    // a different result as `bsr` and is never emitted for older CPUs: it counts.)
    let cpuid_features = if code.mnemonic() == Mnemonic::Tzcnt {
        &[]
    } else {
        code.cpuid_features()
    };
    // The level features in the order they name the instruction: iced lists AVX512VL before
    // AVX512F/BW/DQ, which say more, so its list is read backwards; then the rules of their own.
    let mut order: Vec<u32> = cpuid_features
        .iter()
        .rev()
        .filter_map(|&f| psabi_bit(f))
        .collect();
    // LAHF/SAHF are 8086 instructions, but 64-bit mode has them only with CPUID LAHF-SAHF (v2).
    if matches!(code, Code::Lahf | Code::Sahf) {
        order.push(LAHF);
    }
    match code.encoding() {
        EncodingKind::VEX => order.push(AVX),
        EncodingKind::EVEX | EncodingKind::MVEX => order.push(AVX512F),
        _ => {}
    }
    let features = order.iter().fold(0, |set, &bit| set | bit);
    let level = level_of(features);
    let named = order
        .iter()
        .find(|&&bit| level_of(bit) == level)
        .map(|&bit| index(bit));
    let probe = match code {
        Code::Cpuid => Probe::Cpuid,
        Code::Xgetbv => Probe::Xgetbv,
        _ => Probe::None,
    };
    CodeClass {
        features,
        named,
        beyond: cpuid_features.iter().copied().find(|&f| beyond_levels(f)),
        probe,
    }
}

/// The class of every `Code`, indexed by `Code as usize`.
static CODE_CLASSES: LazyLock<Vec<CodeClass>> =
    LazyLock::new(|| Code::values().map(classify).collect());

/// Decodes x86-64 code and keeps what it uses. One scanner per file: feed it every executable
/// section, then [`finish`](Self::finish).
pub(crate) struct X86Scanner {
    /// The level features seen so far.
    seen: u32,
    /// The first use of each level feature, in the order they were first seen: (index in
    /// [`LEVEL_FEATURES`], code, address).
    first_uses: Vec<(u8, Code, u64)>,
    beyond: Vec<(CpuidFeature, Code, u64)>,
    cpuid_at: Option<u64>,
    xgetbv_at: Option<u64>,
    instructions: u64,
    instruction: Instruction,
}

impl X86Scanner {
    pub(crate) fn new() -> Self {
        Self {
            seen: 0,
            first_uses: Vec::new(),
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
            if class.noteworthy(self.seen) {
                self.note(class);
            }
        }
        self.instructions += count;
    }

    #[cold]
    fn note(&mut self, class: CodeClass) {
        let code = self.instruction.code();
        let ip = self.instruction.ip();
        let new = class.features & !self.seen;
        if new != 0 {
            // The named feature first, so that it is the one reported when it sets the level.
            let named = class.named.filter(|&n| new & (1 << n) != 0);
            let rest = (0..LEVEL_FEATURES.len() as u8).filter(|&i| new & (1 << i) != 0);
            for i in named.into_iter().chain(rest.filter(|&i| Some(i) != named)) {
                self.first_uses.push((i, code, ip));
            }
            self.seen |= new;
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

    /// The usage found, with `symbol_at` naming the function around an address, `ifunc_symbols`
    /// the number of IFUNC symbols in the file and `feature_record` the first symbol of
    /// [`CPU_FEATURE_SYMBOLS`] it references.
    pub(crate) fn finish(
        self,
        symbol_at: impl Fn(u64) -> Option<String>,
        ifunc_symbols: usize,
        feature_record: Option<&str>,
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
            feature_record: feature_record.map(str::to_owned),
        };
        let level = level_of(self.seen);
        // The first feature of the highest level to be seen.
        let forced_by = self
            .first_uses
            .iter()
            .find(|&&(i, _, _)| LEVEL_FEATURES[usize::from(i)].level == level)
            .map(|&(i, c, a)| use_of(LEVEL_FEATURES[usize::from(i)].name.to_owned(), c, a));
        X86Usage {
            level: X86Level::from_number(level),
            forced_by,
            beyond_levels: self
                .beyond
                .iter()
                .map(|&(f, c, a)| use_of(feature_name(f), c, a))
                .collect(),
            partial_level: cpu_below_level(self.seen),
            runtime_dispatch: (dispatch != RuntimeDispatch::default()).then_some(dispatch),
            instructions: self.instructions,
        }
    }
}

#[cfg(test)]
mod tests;
