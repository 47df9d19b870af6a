//! Integration tests of vari-wheel on real variant wheels and on broken ones built here.

mod inspect;
