//! Checking every variable detection reads, up front.
//!
//! During detection a malformed override only leaves its namespace absent (detection never
//! fails as a whole). A command that selects wheels should instead stop with one clear line:
//! a mistyped `NV_VARIANT_PROVIDER_FORCE_SM_ARCH` silently falling back to "no GPU" would pick
//! the wrong build. The variables and their checks come from the [registry].

use crate::context::DetectContext;
pub use crate::override_error::{InvalidVariable, OverrideError};
use crate::registry;

/// Checks every variable the providers and detection read, in the context's environment (an
/// empty value counts as unset), then the combinations a provider requires.
pub fn check_overrides(ctx: &DetectContext) -> Result<(), OverrideError> {
    for var in registry::variables() {
        if let (Some(check), Some(value)) = (var.check, ctx.var(var.name)) {
            check(value).map_err(|expected| InvalidVariable::new(var.name, value, expected))?;
        }
    }
    for provider in registry::providers() {
        provider.check_combination(ctx)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{amd, intel, nvidia};
    use crate::{abi, child, Sysroot};

    fn ctx(vars: &[(&str, &str)]) -> DetectContext {
        // An empty tree: no NVIDIA driver files, whatever this machine has.
        let mut ctx = DetectContext::from_process_env(Sysroot::new("/nonexistent/vari-test"));
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
                (child::TIMEOUT_ENV, "2.5"),
            ])),
            Ok(())
        );
    }

    #[test]
    fn each_malformed_value_is_named() {
        for (name, value) in [
            (nvidia::FORCE_CUDA_ENV, "twelve"),
            (nvidia::FORCE_CUDA_ENV, "12.999"),
            (nvidia::FORCE_SM_ENV, "abc"),
            (nvidia::FORCE_SM_ENV, "8.99"),
            (nvidia::DEVICE_POLICY_ENV, "fastest"),
            (amd::FORCE_GFX_ARCH_ENV, "gfxZZZ"),
            (amd::FORCE_ROCM_VERSION_ENV, "x"),
            (intel::FORCE_DEVICE_IP_ENV, "not-an-ip"),
            (intel::FORCE_DEVICE_IP_ENV, "12.999.0"),
            (abi::OVERRIDE_VAR, "torch=2"),
            (abi::OVERRIDE_VAR, "to rch==2"),
            (child::TIMEOUT_ENV, "abc"),
            (child::TIMEOUT_ENV, "-1"),
            (child::TIMEOUT_ENV, "0"),
            (child::TIMEOUT_ENV, "1e30"),
        ] {
            // The CUDA variable keeps the compute capability alone from being the error.
            let mut vars = vec![(name, value)];
            if name == nvidia::FORCE_SM_ENV {
                vars.push((nvidia::FORCE_CUDA_ENV, "12.8"));
            }
            let err = check_overrides(&ctx(&vars)).unwrap_err().to_string();
            assert!(err.contains(name) && err.contains(value), "{name}: {err}");
        }
    }

    #[test]
    fn a_compute_capability_alone_names_the_missing_cuda_variable() {
        let err = check_overrides(&ctx(&[(nvidia::FORCE_SM_ENV, "8.6")])).unwrap_err();
        assert!(
            matches!(
                err,
                OverrideError::Missing {
                    set: nvidia::FORCE_SM_ENV,
                    missing: nvidia::FORCE_CUDA_ENV,
                    ..
                }
            ),
            "{err}"
        );
        // The CUDA version alone is fine: it gives the bounds without sm_arch.
        assert_eq!(
            check_overrides(&ctx(&[(nvidia::FORCE_CUDA_ENV, "12.8")])),
            Ok(())
        );
    }
}
