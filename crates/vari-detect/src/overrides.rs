//! Checking every override variable up front.
//!
//! During detection a malformed override only leaves its namespace absent (detection never
//! fails as a whole). A command that selects wheels should instead stop with one clear line:
//! a mistyped `NV_VARIANT_PROVIDER_FORCE_SM_ARCH` silently falling back to "no GPU" would pick
//! the wrong build.

use crate::abi;
use crate::context::DetectContext;
use crate::gpu::{amd, intel, nvidia, InvalidOverride};

/// The first override variable whose value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// A GPU provider variable.
    #[error(transparent)]
    Gpu(#[from] InvalidOverride),
    /// `VARIANT_ABI_DEPENDENCY`.
    #[error("invalid {}={value:?}: {error}", abi::OVERRIDE_VAR)]
    AbiDependency {
        /// The value found.
        value: String,
        /// What is wrong with it.
        error: abi::OverrideError,
    },
}

/// Checks every override variable the providers read, in the context's environment (an empty
/// value counts as unset).
pub fn check_overrides(ctx: &DetectContext) -> Result<(), OverrideError> {
    type Check = fn(&str) -> Result<(), InvalidOverride>;
    let gpu: [(&str, Check); 6] = [
        (nvidia::FORCE_CUDA_ENV, |v| {
            nvidia::parse_cuda_version_override(v).map(drop)
        }),
        (nvidia::FORCE_SM_ENV, |v| {
            nvidia::parse_sm_arch_override(v).map(drop)
        }),
        (nvidia::DEVICE_POLICY_ENV, |v| {
            nvidia::parse_device_policy(v).map(drop)
        }),
        (amd::FORCE_GFX_ARCH_ENV, |v| {
            amd::parse_gfx_arch_override(v).map(drop)
        }),
        (amd::FORCE_ROCM_VERSION_ENV, |v| {
            amd::parse_rocm_version_override(v).map(drop)
        }),
        (intel::FORCE_DEVICE_IP_ENV, |v| {
            intel::parse_device_ip_override(v).map(drop)
        }),
    ];
    for (name, check) in gpu {
        if let Some(value) = ctx.var(name) {
            check(value)?;
        }
    }
    if let Some(value) = ctx.var(abi::OVERRIDE_VAR) {
        abi::parse_override(value).map_err(|error| OverrideError::AbiDependency {
            value: value.to_owned(),
            error,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sysroot;

    fn ctx(vars: &[(&str, &str)]) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::host());
        ctx.env = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ctx
    }

    #[test]
    fn valid_and_empty_values_pass() {
        assert_eq!(check_overrides(&ctx(&[])), Ok(()));
        assert_eq!(
            check_overrides(&ctx(&[
                (nvidia::FORCE_CUDA_ENV, "12.8"),
                (nvidia::FORCE_SM_ENV, "8.6"),
                (amd::FORCE_GFX_ARCH_ENV, "gfx90a,gfx942"),
                (amd::FORCE_ROCM_VERSION_ENV, "6.4.1"),
                (intel::FORCE_DEVICE_IP_ENV, "12.60.7"),
                (abi::OVERRIDE_VAR, "torch==2.8.0"),
                (nvidia::DEVICE_POLICY_ENV, ""),
            ])),
            Ok(())
        );
    }

    #[test]
    fn each_malformed_value_is_named() {
        for (name, value) in [
            (nvidia::FORCE_CUDA_ENV, "twelve"),
            (nvidia::FORCE_SM_ENV, "abc"),
            (nvidia::DEVICE_POLICY_ENV, "fastest"),
            (amd::FORCE_ROCM_VERSION_ENV, "x"),
            (intel::FORCE_DEVICE_IP_ENV, "not-an-ip"),
            (abi::OVERRIDE_VAR, "torch=2"),
            (abi::OVERRIDE_VAR, "to rch==2"),
        ] {
            let err = check_overrides(&ctx(&[(name, value)]))
                .unwrap_err()
                .to_string();
            assert!(err.contains(name), "{name}: {err}");
        }
    }
}
