//! Reading `[[tool.vari.families]]` and `[packages.tool.vari] builds`. The tables are new, so
//! unlike the rest of `[tool.vari]` an unknown key is refused: an older reader that skipped a
//! key deciding which build a machine installs would install the wrong one.

use vari_core::Property;

use crate::fields::Fields;
use crate::model::{BuildRef, LockFamily, LockedBuild};
use crate::LockError;

/// `[[tool.vari.families]]` of `fields` (`tool.vari`).
pub(super) fn read_families(fields: &mut Fields) -> Result<Vec<LockFamily>, LockError> {
    let tables = fields.tables("families")?.unwrap_or_default();
    if tables.len() > crate::families::MAX_FAMILIES {
        return Err(fields.error(
            "families",
            format!("has more than {} entries", crate::families::MAX_FAMILIES),
        ));
    }
    let mut families = Vec::with_capacity(tables.len());
    for (i, table) in tables.into_iter().enumerate() {
        let mut family = Fields::new(table, &format!("tool.vari.families[{i}]"));
        let name = normalized_name(&mut family, "name", true)?.unwrap_or_default();
        let group = normalized_name(&mut family, "group", false)?;
        let build_tables = family
            .tables("builds")?
            .ok_or_else(|| family.error("builds", "is missing"))?;
        if build_tables.len() > crate::families::MAX_BUILDS {
            return Err(family.error(
                "builds",
                format!("has more than {} entries", crate::families::MAX_BUILDS),
            ));
        }
        let mut builds = Vec::with_capacity(build_tables.len());
        for (j, table) in build_tables.into_iter().enumerate() {
            let path = format!("tool.vari.families[{i}].builds[{j}]");
            builds.push(read_build(Fields::new(table, &path))?);
        }
        family.refuse_rest()?;
        families.push(LockFamily {
            name,
            group,
            builds,
        });
    }
    Ok(families)
}

fn read_build(mut fields: Fields) -> Result<LockedBuild, LockError> {
    let name = fields.required_string("name")?;
    let distribution = normalized_name(&mut fields, "distribution", true)?.unwrap_or_default();
    let extra = normalized_name(&mut fields, "extra", false)?;
    let texts = fields.strings("requires")?;
    if texts.len() > crate::families::MAX_REQUIRES {
        return Err(fields.error(
            "requires",
            format!("has more than {} items", crate::families::MAX_REQUIRES),
        ));
    }
    let mut requires = Vec::with_capacity(texts.len());
    for (k, text) in texts.iter().enumerate() {
        let property: Property = text.parse().map_err(|err| {
            fields.error(
                &format!("requires[{k}]"),
                format!("{text:?}: {err} (expected \"NAMESPACE :: FEATURE :: VALUE\")"),
            )
        })?;
        requires.push(property);
    }
    let null = match fields.take("null") {
        Some(toml::Value::Boolean(value)) => value,
        Some(_) => return Err(fields.error("null", "must be true or false")),
        None => false,
    };
    let classes = fields.strings("classes")?;
    fields.refuse_rest()?;
    Ok(LockedBuild {
        name,
        distribution,
        extra,
        requires,
        null,
        classes,
    })
}

/// `[packages.tool.vari] builds`: `[{ family = "torch", build = "cu128" }, …]`.
pub(super) fn read_build_refs(fields: &mut Fields) -> Result<Vec<BuildRef>, LockError> {
    let path = fields.key("builds");
    let tables = fields.tables("builds")?.unwrap_or_default();
    let mut refs = Vec::with_capacity(tables.len());
    for (i, table) in tables.into_iter().enumerate() {
        let mut item = Fields::new(table, &format!("{path}[{i}]"));
        let family = normalized_name(&mut item, "family", true)?.unwrap_or_default();
        let build = item.required_string("build")?;
        item.refuse_rest()?;
        refs.push(BuildRef { family, build });
    }
    Ok(refs)
}

/// A name read as PEP 503 asks (any spelling, kept in normal form).
fn normalized_name(
    fields: &mut Fields,
    key: &str,
    required: bool,
) -> Result<Option<String>, LockError> {
    let text = if required {
        Some(fields.required_string(key)?)
    } else {
        fields.string(key)?
    };
    match text {
        Some(text) if !vari_core::project::is_valid(&text) => {
            Err(fields.error(key, format!("{text:?} is not a valid name")))
        }
        Some(text) => Ok(Some(vari_core::project::normalize(&text))),
        None => Ok(None),
    }
}
