//! Variant wheel archives: reading `variant.json` and checking RECORD without extracting.
