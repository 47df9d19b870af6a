//! Integration tests of vari-install: listing what real installers (pip, uv) installed.

mod installers;
