//! Parsing a marker into its boolean structure.
//!
//! PEP 508 parsers reject the four variant variables, so the boolean structure (`and`, `or`,
//! parentheses) is parsed here. Each comparison is then either a variant comparison, checked and
//! evaluated by this module, or a standard one, handed verbatim to `pep508_rs`. Everything is
//! checked while parsing, so evaluation cannot fail.

use std::str::FromStr;

use pep508_rs::MarkerTree;

use super::error::MarkerError;

/// A parsed marker expression.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    /// True when any operand is.
    Or(Vec<Expr>),
    /// True when every operand is.
    And(Vec<Expr>),
    /// A standard PEP 508 comparison, already parsed by `pep508_rs`, and its text with single
    /// spaces between operands and operator (what [`super::resolve`] prints back).
    Standard(MarkerTree, String),
    /// A comparison involving a variant variable.
    Variant(VariantTest),
    /// `"x" in extras` / `"x" in dependency_groups` (PEP 751 lock-file markers only; see
    /// [`super::lock`]), and its text.
    LockSet(LockSetTest, String),
}

/// PEP 751's two set variables, which only a lock file's `packages.marker` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockSet {
    Extras,
    DependencyGroups,
}

/// `"name" in extras` (or `not in`, or `dependency_groups`): the name normalised (PEP 685 /
/// PEP 735 compare names in their PEP 503 form).
#[derive(Debug, Clone)]
pub(crate) struct LockSetTest {
    pub(crate) set: LockSet,
    pub(crate) name: String,
    pub(crate) negate: bool,
}

/// The four variant marker variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VariantVar {
    Label,
    Properties,
    Features,
    Namespaces,
}

impl VariantVar {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "variant_label" => Self::Label,
            "variant_properties" => Self::Properties,
            "variant_features" => Self::Features,
            "variant_namespaces" => Self::Namespaces,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Label => "variant_label",
            Self::Properties => "variant_properties",
            Self::Features => "variant_features",
            Self::Namespaces => "variant_namespaces",
        }
    }
}

/// A checked variant comparison.
#[derive(Debug, Clone)]
pub(crate) enum VariantTest {
    /// `variant_label == "x"` (also `===`, either operand order); `negate` for `!=`.
    LabelEquals { literal: String, negate: bool },
    /// `"x" in variant_label`: the literal is a substring of the label.
    LiteralInLabel { literal: String, negate: bool },
    /// `variant_label in "x y"`: the label is a substring of the literal.
    LabelInLiteral { literal: String, negate: bool },
    /// `"x" in variant_{properties,features,namespaces}`.
    Member {
        var: VariantVar,
        literal: String,
        negate: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum TokenKind {
    LParen,
    RParen,
    And,
    Or,
    Not,
    In,
    /// A comparison operator other than `in`/`not in`.
    Cmp(&'static str),
    /// An unquoted word (a marker variable, or garbage that the PEP 508 parser will name).
    Ident(String),
    /// A quoted string, without its quotes.
    Str(String),
}

#[derive(Debug, Clone)]
struct Token {
    kind: TokenKind,
    /// Byte range in the marker text.
    start: usize,
    end: usize,
}

/// Operators, longest first so that `===` is not read as `==` `=`.
const OPERATORS: [&str; 8] = ["===", "==", "!=", "~=", "<=", ">=", "<", ">"];

fn syntax(marker: &str, byte: usize, message: impl Into<String>) -> MarkerError {
    MarkerError::Syntax {
        marker: marker.to_owned(),
        column: marker[..byte.min(marker.len())].chars().count() + 1,
        message: message.into(),
    }
}

fn tokenize(marker: &str) -> Result<Vec<Token>, MarkerError> {
    let bytes = marker.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'(' => {
                i += 1;
                TokenKind::LParen
            }
            b')' => {
                i += 1;
                TokenKind::RParen
            }
            b'"' | b'\'' => {
                let close = marker[i + 1..]
                    .find(c as char)
                    .ok_or_else(|| syntax(marker, start, "unterminated string"))?;
                let text = &marker[i + 1..i + 1 + close];
                i += close + 2;
                TokenKind::Str(text.to_owned())
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' => {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
                {
                    i += 1;
                }
                match &marker[start..i] {
                    "and" => TokenKind::And,
                    "or" => TokenKind::Or,
                    "not" => TokenKind::Not,
                    "in" => TokenKind::In,
                    word => TokenKind::Ident(word.to_owned()),
                }
            }
            _ => {
                let rest = &marker[i..];
                let op = OPERATORS
                    .iter()
                    .find(|op| rest.starts_with(**op))
                    .ok_or_else(|| {
                        let ch = rest.chars().next().unwrap_or(' ');
                        syntax(marker, start, format!("unexpected character {ch:?}"))
                    })?;
                i += op.len();
                TokenKind::Cmp(op)
            }
        };
        tokens.push(Token {
            kind,
            start,
            end: i,
        });
    }
    Ok(tokens)
}

/// Parses `marker` (the text after `;` in a requirement, or an `enable-if` value).
///
/// The nesting is checked first: the parser recurses once per parenthesis.
pub(crate) fn parse(marker: &str) -> Result<Expr, MarkerError> {
    parse_with(marker, false)
}

/// [`parse`], with PEP 751's `extras` and `dependency_groups` known when `lock` is set.
pub(crate) fn parse_with(marker: &str, lock: bool) -> Result<Expr, MarkerError> {
    super::check_marker_depth(marker)?;
    let tokens = tokenize(marker)?;
    if tokens.is_empty() {
        return Err(syntax(marker, 0, "empty marker"));
    }
    let mut parser = Parser {
        marker,
        tokens: &tokens,
        pos: 0,
        lock,
    };
    let expr = parser.or()?;
    match parser.tokens.get(parser.pos) {
        None => Ok(expr),
        Some(t) if t.kind == TokenKind::RParen => {
            Err(syntax(marker, t.start, "unmatched closing parenthesis"))
        }
        Some(t) => Err(syntax(
            marker,
            t.start,
            format!(
                "expected `and` or `or`, found `{}`",
                &marker[t.start..t.end]
            ),
        )),
    }
}

/// Operand of a comparison.
enum Operand<'a> {
    Var(VariantVar),
    /// `extras` or `dependency_groups`, in a lock-file marker.
    Set(LockSet),
    /// A standard marker variable (its name is checked by the PEP 508 parser).
    Ident,
    Str(&'a str),
}

/// The operator of a comparison.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Cmp(&'static str),
    In,
    NotIn,
}

struct Parser<'a> {
    marker: &'a str,
    tokens: &'a [Token],
    pos: usize,
    /// Whether PEP 751's set variables are known (a lock file's marker).
    lock: bool,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.pos)
    }

    fn end_error(&self, expected: &str) -> MarkerError {
        syntax(
            self.marker,
            self.marker.len(),
            format!("expected {expected}, found the end of the marker"),
        )
    }

    fn or(&mut self) -> Result<Expr, MarkerError> {
        let mut items = vec![self.and()?];
        while matches!(self.peek(), Some(t) if t.kind == TokenKind::Or) {
            self.pos += 1;
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Expr::Or(items)
        })
    }

    fn and(&mut self) -> Result<Expr, MarkerError> {
        let mut items = vec![self.primary()?];
        while matches!(self.peek(), Some(t) if t.kind == TokenKind::And) {
            self.pos += 1;
            items.push(self.primary()?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Expr::And(items)
        })
    }

    fn primary(&mut self) -> Result<Expr, MarkerError> {
        let token = self
            .peek()
            .ok_or_else(|| self.end_error("a comparison or `(`"))?;
        if token.kind == TokenKind::LParen {
            self.pos += 1;
            let inner = self.or()?;
            match self.peek() {
                Some(t) if t.kind == TokenKind::RParen => {
                    self.pos += 1;
                    Ok(inner)
                }
                Some(t) => Err(syntax(
                    self.marker,
                    t.start,
                    format!(
                        "expected `)` to close the `(` at column {}, found `{}`",
                        self.marker[..token.start].chars().count() + 1,
                        &self.marker[t.start..t.end]
                    ),
                )),
                None => Err(syntax(
                    self.marker,
                    token.start,
                    "this parenthesis is never closed",
                )),
            }
        } else {
            self.comparison()
        }
    }

    fn operand(&mut self) -> Result<(Operand<'a>, &'a Token), MarkerError> {
        let token = self
            .peek()
            .ok_or_else(|| self.end_error("a marker variable or a quoted string"))?;
        let operand = match &token.kind {
            TokenKind::Str(s) => Operand::Str(s),
            TokenKind::Ident(name) if self.lock && name == "extras" => {
                Operand::Set(LockSet::Extras)
            }
            TokenKind::Ident(name) if self.lock && name == "dependency_groups" => {
                Operand::Set(LockSet::DependencyGroups)
            }
            TokenKind::Ident(name) => match VariantVar::from_name(name) {
                Some(var) => Operand::Var(var),
                None if name.starts_with("variant_") => {
                    return Err(syntax(
                        self.marker,
                        token.start,
                        format!(
                            "unknown variant marker `{name}`; expected variant_label, \
                             variant_properties, variant_features or variant_namespaces"
                        ),
                    ))
                }
                None => Operand::Ident,
            },
            _ => {
                return Err(syntax(
                    self.marker,
                    token.start,
                    format!(
                        "expected a marker variable or a quoted string, found `{}`",
                        &self.marker[token.start..token.end]
                    ),
                ))
            }
        };
        self.pos += 1;
        Ok((operand, token))
    }

    fn operator(&mut self) -> Result<Op, MarkerError> {
        let token = self.peek().ok_or_else(|| self.end_error("an operator"))?;
        self.pos += 1;
        match token.kind {
            TokenKind::Cmp(op) => Ok(Op::Cmp(op)),
            TokenKind::In => Ok(Op::In),
            TokenKind::Not => match self.peek() {
                Some(t) if t.kind == TokenKind::In => {
                    self.pos += 1;
                    Ok(Op::NotIn)
                }
                _ => Err(syntax(
                    self.marker,
                    token.start,
                    "expected `in` after `not`",
                )),
            },
            _ => Err(syntax(
                self.marker,
                token.start,
                format!(
                    "expected an operator (==, !=, <, <=, >, >=, ~=, ===, in, not in), found `{}`",
                    &self.marker[token.start..token.end]
                ),
            )),
        }
    }

    fn comparison(&mut self) -> Result<Expr, MarkerError> {
        let start = self.pos;
        let (lhs, first) = self.operand()?;
        let op = self.operator()?;
        let (rhs, last) = self.operand()?;
        let atom = &self.marker[first.start..last.end];
        if matches!(lhs, Operand::Set(_)) || matches!(rhs, Operand::Set(_)) {
            return lock_set_test(self.marker, atom, lhs, op, rhs)
                .map(|test| Expr::LockSet(test, atom.to_owned()));
        }
        if matches!(lhs, Operand::Var(_)) || matches!(rhs, Operand::Var(_)) {
            return variant_test(self.marker, atom, lhs, op, rhs).map(Expr::Variant);
        }
        crate::metadata::check_marker_text(atom).map_err(|message| MarkerError::Standard {
            marker: self.marker.to_owned(),
            atom: atom.to_owned(),
            message,
        })?;
        // The operands as written (quotes included), the operator spaced once: valid for any
        // PEP 508 parser, and free of the line breaks a folded METADATA field may leave inside.
        let text = self.tokens[start..self.pos]
            .iter()
            .map(|t| &self.marker[t.start..t.end])
            .collect::<Vec<_>>()
            .join(" ");
        MarkerTree::from_str(atom)
            .map(|tree| Expr::Standard(tree, text))
            .map_err(|e| MarkerError::Standard {
                marker: self.marker.to_owned(),
                atom: atom.to_owned(),
                message: e.message.to_string(),
            })
    }
}

/// Checks one comparison naming `extras` or `dependency_groups`: only `"name" in SET` and
/// `"name" not in SET` are defined (PEP 751).
fn lock_set_test(
    marker: &str,
    atom: &str,
    lhs: Operand<'_>,
    op: Op,
    rhs: Operand<'_>,
) -> Result<LockSetTest, MarkerError> {
    match (lhs, op, rhs) {
        (Operand::Str(name), Op::In | Op::NotIn, Operand::Set(set)) => Ok(LockSetTest {
            set,
            name: crate::project::normalize(name),
            negate: op == Op::NotIn,
        }),
        _ => Err(MarkerError::Standard {
            marker: marker.to_owned(),
            atom: atom.to_owned(),
            message: "`extras` and `dependency_groups` are sets: write `\"name\" in extras` or \
                      `\"name\" not in dependency_groups`"
                .to_owned(),
        }),
    }
}

/// Checks one comparison naming a variant variable and turns it into a [`VariantTest`].
fn variant_test(
    marker: &str,
    atom: &str,
    lhs: Operand<'_>,
    op: Op,
    rhs: Operand<'_>,
) -> Result<VariantTest, MarkerError> {
    let error = |message: String| MarkerError::Variant {
        marker: marker.to_owned(),
        atom: atom.to_owned(),
        message,
    };
    let negate = matches!(op, Op::Cmp("!=") | Op::NotIn);
    match (lhs, op, rhs) {
        (Operand::Var(VariantVar::Label), Op::Cmp(c), Operand::Str(s))
        | (Operand::Str(s), Op::Cmp(c), Operand::Var(VariantVar::Label))
            if matches!(c, "==" | "!=" | "===") =>
        {
            Ok(VariantTest::LabelEquals {
                literal: s.to_owned(),
                negate,
            })
        }
        (Operand::Str(s), Op::In | Op::NotIn, Operand::Var(VariantVar::Label)) => {
            Ok(VariantTest::LiteralInLabel {
                literal: s.to_owned(),
                negate,
            })
        }
        (Operand::Var(VariantVar::Label), Op::In | Op::NotIn, Operand::Str(s)) => {
            Ok(VariantTest::LabelInLiteral {
                literal: s.to_owned(),
                negate,
            })
        }
        (Operand::Var(VariantVar::Label), Op::Cmp(c), Operand::Str(_))
        | (Operand::Str(_), Op::Cmp(c), Operand::Var(VariantVar::Label)) => Err(error(format!(
            "`variant_label` is a label, not a version: use ==, != , in or not in (not `{c}`)"
        ))),
        (Operand::Str(s), Op::In | Op::NotIn, Operand::Var(var)) => Ok(VariantTest::Member {
            var,
            literal: s.to_owned(),
            negate,
        }),
        (Operand::Var(var), _, Operand::Str(_)) | (Operand::Str(_), _, Operand::Var(var)) => {
            Err(error(format!(
                "`{0}` is a set of strings: test membership with `\"...\" in {0}` or \
                 `\"...\" not in {0}`",
                var.name()
            )))
        }
        _ => Err(error(
            "a variant marker must be compared with a quoted string".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax_column(marker: &str) -> usize {
        match parse(marker) {
            Err(MarkerError::Syntax { column, .. }) => column,
            other => panic!("{marker:?} should be a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn structure_nests_and_binds_and_tighter_than_or() {
        let e = parse(r#"os_name == "a" or os_name == "b" and os_name == "c""#).unwrap();
        match e {
            Expr::Or(items) => {
                assert_eq!(items.len(), 2);
                assert!(matches!(&items[1], Expr::And(inner) if inner.len() == 2));
            }
            other => panic!("{other:?}"),
        }
        let e = parse(r#"((os_name == "a"))"#).unwrap();
        assert!(matches!(e, Expr::Standard(_, text) if text == r#"os_name == "a""#));
    }

    #[test]
    fn syntax_errors_point_at_the_problem() {
        assert_eq!(syntax_column(r#"os_name == "a"#), 12);
        assert_eq!(syntax_column(r#"(os_name == "a""#), 1);
        assert_eq!(syntax_column(r#"os_name == "a")"#), 15);
        assert_eq!(syntax_column(r#"os_name == "a" and"#), 19);
        assert_eq!(syntax_column(r#"os_name = "a""#), 9);
        assert_eq!(syntax_column(r#"os_name "a""#), 9);
        assert_eq!(syntax_column(r#""a" not "b""#), 5);
        assert_eq!(syntax_column(r#"os_name == "a" os_name == "b""#), 16);
        assert_eq!(syntax_column(""), 1);
        assert_eq!(syntax_column("   "), 1);
        assert_eq!(syntax_column(r#"variant_labels == "x""#), 1);
        assert_eq!(syntax_column(r#"() "#), 2);
    }

    #[test]
    fn standard_atoms_are_checked_by_pep508() {
        let err = parse(r#"python_version >= "3" and nonsense == "1""#).unwrap_err();
        match err {
            MarkerError::Standard { atom, .. } => assert_eq!(atom, r#"nonsense == "1""#),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn variant_misuse_is_explained() {
        for (marker, needle) in [
            (r#"variant_namespaces == "x""#, "is a set of strings"),
            (r#"variant_properties in "x""#, "is a set of strings"),
            (r#"variant_label >= "x""#, "not a version"),
            (r#"variant_label == variant_label"#, "quoted string"),
            (r#"variant_label == os_name"#, "quoted string"),
        ] {
            let err = parse(marker).unwrap_err();
            assert!(
                matches!(&err, MarkerError::Variant { .. }) && err.to_string().contains(needle),
                "{marker}: {err}"
            );
        }
    }
}
