//! The level table and the decoding loop on hand-assembled instructions (each one's decoding is
//! checked first, so a wrong byte sequence fails loudly instead of testing something else).

use super::*;

/// Decodes one instruction and checks it is what the test means.
/// The name of the feature a class names.
fn name_of(class: CodeClass) -> String {
    LEVEL_FEATURES[usize::from(class.named.unwrap())]
        .name
        .to_owned()
}

fn one(bytes: &[u8], mnemonic: &str) -> Code {
    let mut decoder = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE);
    let instr = decoder.decode();
    assert_eq!(
        instr.len(),
        bytes.len(),
        "{mnemonic}: not one whole instruction"
    );
    assert_eq!(
        format!("{:?}", instr.mnemonic()).to_ascii_lowercase(),
        mnemonic
    );
    instr.code()
}

const POPCNT: &[u8] = b"\xf3\x48\x0f\xb8\xc0"; // popcnt rax, rax
const VFMADD: &[u8] = b"\xc4\xe2\xf9\xa8\xc2"; // vfmadd213pd xmm0, xmm0, xmm2
const VPADDD_ZMM: &[u8] = b"\x62\xf1\x7d\x48\xfe\xc1"; // vpaddd zmm0, zmm0, zmm1
const VPDPBUSD_ZMM: &[u8] = b"\x62\xf2\x7d\x48\x50\xc1"; // vpdpbusd zmm0, zmm0, zmm1
const AESENC: &[u8] = b"\x66\x0f\x38\xdc\xc1"; // aesenc xmm0, xmm1
const CPUID: &[u8] = b"\x0f\xa2";
const XGETBV: &[u8] = b"\x0f\x01\xd0";
const LAHF: &[u8] = b"\x9f";
const ADDPD: &[u8] = b"\x66\x0f\x58\xc1"; // addpd xmm0, xmm1 (SSE2: baseline)
const ENDBR64: &[u8] = b"\xf3\x0f\x1e\xfa"; // a no-op hint on older CPUs
const TZCNT: &[u8] = b"\xf3\x48\x0f\xbc\xc1"; // tzcnt rax, rcx = rep bsf: runs as bsf
const LZCNT: &[u8] = b"\xf3\x48\x0f\xbd\xc1"; // lzcnt rax, rcx: bsr gives another result

#[test]
fn the_psabi_features_map_to_their_levels() {
    use CpuidFeature::*;
    for f in [CMPXCHG16B, POPCNT, SSE3, SSE4_1, SSE4_2, SSSE3] {
        assert_eq!(psabi_level(f), Some(2), "{f:?}");
    }
    for f in [AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE] {
        assert_eq!(psabi_level(f), Some(3), "{f:?}");
    }
    for f in [AVX512F, AVX512BW, AVX512CD, AVX512DQ, AVX512VL] {
        assert_eq!(psabi_level(f), Some(4), "{f:?}");
    }
    for f in [SSE, SSE2, CMOV, CX8, FXSR, MMX, AES, AVX512_VNNI, XSAVE] {
        assert_eq!(psabi_level(f), None, "{f:?}");
    }
}

#[test]
fn every_code_is_classified() {
    assert_eq!(CODE_CLASSES.len(), Code::values().count());
    assert_eq!(CODE_CLASSES[Code::INVALID as usize].level(), 1);
}

#[test]
fn instructions_classify_by_features_encoding_and_probe() {
    let class = |bytes, m| classify(one(bytes, m));
    let c = class(POPCNT, "popcnt");
    assert_eq!((c.level(), name_of(c)), (2, "popcnt".into()));
    let c = class(VFMADD, "vfmadd213pd");
    assert_eq!((c.level(), name_of(c)), (3, "fma".into()));
    let c = class(VPADDD_ZMM, "vpaddd");
    assert_eq!((c.level(), name_of(c)), (4, "avx512f".into()));
    // In no level itself, but EVEX-encoded: v4, and reported as beyond the levels.
    let c = class(VPDPBUSD_ZMM, "vpdpbusd");
    assert_eq!(c.level(), 4);
    assert_eq!(c.beyond, Some(CpuidFeature::AVX512_VNNI));
    let c = class(AESENC, "aesenc");
    assert_eq!((c.level(), c.beyond), (1, Some(CpuidFeature::AES)));
    let c = class(LAHF, "lahf");
    assert_eq!((c.level(), name_of(c)), (2, "lahf_lm".into()));
    assert_eq!(class(CPUID, "cpuid").probe, Probe::Cpuid);
    let c = class(XGETBV, "xgetbv");
    assert_eq!(
        (c.level(), c.probe),
        (1, Probe::Xgetbv),
        "a probe, not a v3 requirement"
    );
    let c = class(LZCNT, "lzcnt");
    assert_eq!((c.level(), name_of(c)), (3, "abm".into()));
    for (bytes, m) in [(ADDPD, "addpd"), (ENDBR64, "endbr64"), (TZCNT, "tzcnt")] {
        let c = class(bytes, m);
        assert_eq!(
            (c.level(), c.beyond, c.probe),
            (1, None, Probe::None),
            "{m}"
        );
    }
}

fn scan(code: &[u8], address: u64) -> X86Usage {
    let mut scanner = X86Scanner::new();
    scanner.scan(code, address);
    scanner.finish(|a| (a == 0x1009).then(|| "hot_loop".to_owned()), 0, None)
}

#[test]
fn the_highest_level_and_its_first_instruction_are_reported() {
    let code = [ADDPD, POPCNT, VPADDD_ZMM, VFMADD, VPADDD_ZMM].concat();
    let usage = scan(&code, 0x1000);
    assert_eq!(usage.level, X86Level::V4);
    assert_eq!(usage.instructions, 5);
    let forced = usage.forced_by.unwrap();
    assert_eq!(
        (
            forced.extension.as_str(),
            forced.mnemonic.as_str(),
            forced.address
        ),
        ("avx512f", "vpaddd", 0x1009)
    );
    assert_eq!(forced.to_string(), "avx512f (vpaddd at 0x1009 in hot_loop)");
    assert_eq!(usage.runtime_dispatch, None);
}

#[test]
fn baseline_code_is_v1_with_nothing_forcing_it() {
    let usage = scan(&[ADDPD, ENDBR64, ADDPD].concat(), 0);
    assert_eq!((usage.level, usage.forced_by), (X86Level::V1, None));
    assert!(usage.beyond_levels.is_empty());
}

#[test]
fn extensions_beyond_the_levels_and_dispatch_probes_are_kept_once() {
    let code = [CPUID, AESENC, XGETBV, AESENC, VPDPBUSD_ZMM, CPUID].concat();
    let usage = scan(&code, 0x100);
    let beyond: Vec<String> = usage
        .beyond_levels
        .iter()
        .map(|u| u.extension.clone())
        .collect();
    assert_eq!(beyond, ["aes", "avx512_vnni"]);
    assert_eq!(usage.level, X86Level::V4);
    assert_eq!(
        usage.forced_by.unwrap().extension,
        "avx512f",
        "by EVEX encoding"
    );
    let dispatch = usage.runtime_dispatch.unwrap();
    assert_eq!(
        (dispatch.cpuid_at, dispatch.xgetbv_at),
        (Some(0x100), Some(0x107))
    );
    assert_eq!(dispatch.to_string(), "cpuid at 0x100, xgetbv at 0x107");
}

#[test]
fn sections_accumulate_and_ifuncs_count_as_dispatch() {
    let mut scanner = X86Scanner::new();
    scanner.scan(POPCNT, 0x10);
    scanner.scan(VFMADD, 0x20);
    let usage = scanner.finish(|_| None, 2, None);
    assert_eq!(usage.level, X86Level::V3);
    assert_eq!(usage.instructions, 2);
    assert_eq!(usage.runtime_dispatch.unwrap().ifunc_symbols, 2);
}

#[test]
fn levels_parse_and_order() {
    assert!(X86Level::V4 > X86Level::V3 && X86Level::V2 > X86Level::V1);
    for l in [X86Level::V1, X86Level::V2, X86Level::V3, X86Level::V4] {
        assert_eq!(X86Level::parse(l.as_str()), Some(l));
    }
    assert_eq!(X86Level::parse("v5"), None);
}

#[test]
fn part_of_a_level_names_a_cpu_below_it_that_runs_the_code() {
    let below = |set| cpu_below_level(set).map(|cpu| cpu.name);
    assert_eq!(below(super::POPCNT), Some("AMD K10"));
    assert_eq!(below(SSE4_1 | SSSE3), Some("Intel Penryn"));
    assert_eq!(
        below(super::POPCNT | SSE4_1),
        None,
        "what -march=x86-64-v2 emits"
    );
    assert_eq!(below(V2 | AVX), Some("Intel Ivy Bridge"));
    assert_eq!(below(V2 | AVX | FMA | BMI1), Some("AMD Piledriver"));
    assert_eq!(below(AVX | MOVBE), Some("AMD Jaguar"));
    assert_eq!(below(AVX | AVX2), None, "what -march=x86-64-v3 emits");
    assert_eq!(below(AVX | BMI2), None);
    assert_eq!(below(AVX512F), None, "no CPU is listed below v4");
    assert_eq!(below(0), None);
}
