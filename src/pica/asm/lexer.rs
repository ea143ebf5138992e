//! Splits source text into lines of tokens.
//!
//! One statement per line; `;` starts a comment that runs to the end of the line (outside string
//! literals). A line whose first visible character is `#` is a C-preprocessor line marker
//! (`# 12 "file.vsh"` or `#line 12 "file.vsh"`): the line after it is reported as line 12 of
//! `file.vsh`. Every token remembers where it came from so that errors can point at it.

use super::AsmError;

/// A source position: index into the file-name table, 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// Identifier: letters, digits, `_` and `$`, not starting with a digit.
    Ident(String),
    /// Number literal, kept as written (`12`, `0x1F`, `1.5e-3`, `.5`); interpreted by the parser
    /// according to what the statement expects.
    Num(String),
    /// String literal with escapes resolved.
    Str(String),
    /// Punctuation: `, ( ) [ ] + - ! & | && || : = @ . /`.
    Punct(&'static str),
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Num(s) => format!("`{s}`"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::Punct(p) => format!("`{p}`"),
        }
    }
}

/// A token and where it starts.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub loc: Loc,
}

/// The tokens of one non-empty source line.
#[derive(Clone, Debug)]
pub(crate) struct Line {
    /// Position of the first character of the line (column 1).
    pub loc: Loc,
    /// Position just after the last token, for "missing operand" errors.
    pub end: Loc,
    pub tokens: Vec<Token>,
}

/// Interning table for file names (line markers can introduce new ones).
#[derive(Clone, Default, Debug)]
pub(crate) struct FileNames {
    names: Vec<String>,
}

impl FileNames {
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return i as u32;
        }
        self.names.push(name.to_string());
        (self.names.len() - 1) as u32
    }

    /// Order in which a file name was first seen (for sorting messages).
    pub fn position(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|n| n == name)
            .unwrap_or(usize::MAX)
    }

    pub fn name(&self, id: u32) -> &str {
        self.names
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("<unknown>")
    }

    /// An error at `loc`.
    pub fn error(&self, loc: Loc, message: impl Into<String>) -> AsmError {
        AsmError {
            file: self.name(loc.file).to_string(),
            line: loc.line,
            column: loc.col,
            message: message.into(),
        }
    }
}

const PUNCTS: &[&str] = &[
    "&&", "||", ",", "(", ")", "[", "]", "+", "-", "!", "&", "|", ":", "=", "@", ".", "/", "*",
];

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Tokenize a whole file. Lexical errors are appended to `errors`; the offending line is
/// dropped (so one bad character costs one statement, not the file).
pub(crate) fn lex_file(
    name: &str,
    text: &str,
    names: &mut FileNames,
    errors: &mut Vec<AsmError>,
) -> Vec<Line> {
    let mut lines = LineLexer::new(name, text, names);
    let mut out = Vec::new();
    while let Some(r) = lines.next(names, |_| true) {
        match r {
            Ok(line) => out.push(line),
            Err(e) => errors.push(e),
        }
    }
    out
}

/// Tokenizes a file one line at a time, so that the assembler holds one line's tokens at a
/// time rather than the whole file's (a token costs several times the bytes it spans).
pub(crate) struct LineLexer<'t> {
    rest: Option<&'t str>,
    file: u32,
    line_no: u32,
}

impl<'t> LineLexer<'t> {
    pub fn new(name: &str, text: &'t str, names: &mut FileNames) -> LineLexer<'t> {
        LineLexer {
            rest: Some(text),
            file: names.intern(name),
            line_no: 0,
        }
    }

    /// The next non-empty line (or its lexical error); `None` at the end of the file. Lines
    /// whose raw text `wanted` rejects are skipped without tokenizing (line markers are
    /// always followed).
    pub fn next(
        &mut self,
        names: &mut FileNames,
        wanted: impl Fn(&str) -> bool,
    ) -> Option<Result<Line, AsmError>> {
        loop {
            let text = self.rest?;
            let (raw, rest) = match text.split_once('\n') {
                Some((raw, rest)) => (raw, Some(rest)),
                None => (text, None),
            };
            self.rest = rest;
            self.line_no = self.line_no.saturating_add(1);
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let trimmed = raw.trim_start();
            if trimmed.starts_with('#') {
                let col = (raw.chars().count() - trimmed.chars().count()) as u32 + 1;
                let here = Loc {
                    file: self.file,
                    line: self.line_no,
                    col,
                };
                match line_marker(trimmed) {
                    Some((n, new_file)) => {
                        if let Some(f) = new_file {
                            self.file = names.intern(&f);
                        }
                        // The next line is line `n`.
                        self.line_no = n.saturating_sub(1);
                    }
                    None => return Some(Err(names.error(
                        here,
                        "unsupported preprocessor line (only `# <line> \"<file>\"` markers are understood)",
                    ))),
                }
                continue;
            }
            if !wanted(raw) {
                continue;
            }
            match lex_line(raw, self.file, self.line_no) {
                Ok(Some(line)) => return Some(Ok(line)),
                Ok(None) => {}
                Err((loc, msg)) => return Some(Err(names.error(loc, msg))),
            }
        }
    }
}

/// Parse `# 12 "name" flags…` / `#line 12 "name"`; `None` if it is not a line marker.
fn line_marker(s: &str) -> Option<(u32, Option<String>)> {
    let rest = s.strip_prefix('#')?.trim_start();
    let rest = rest
        .strip_prefix("line")
        .map(str::trim_start)
        .unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    let rest = rest[digits.len()..].trim_start();
    if rest.is_empty() {
        return Some((n, None));
    }
    let body = rest.strip_prefix('"')?;
    let mut name = String::new();
    let mut chars = body.chars();
    loop {
        match chars.next()? {
            '"' => break,
            '\\' => name.push(chars.next()?),
            c => name.push(c),
        }
    }
    Some((n, Some(name)))
}

type LexResult = Result<Option<Line>, (Loc, String)>;

fn lex_line(raw: &str, file: u32, line: u32) -> LexResult {
    let chars: Vec<char> = raw.chars().collect();
    let loc_at = |i: usize| Loc {
        file,
        line,
        col: i as u32 + 1,
    };
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ';' {
            break;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let loc = loc_at(start);
        if is_ident_start(c) {
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            tokens.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                loc,
            });
            continue;
        }
        let next = chars.get(i + 1).copied();
        if c.is_ascii_digit() || (c == '.' && next.is_some_and(|d| d.is_ascii_digit())) {
            i = scan_number(&chars, i);
            tokens.push(Token {
                tok: Tok::Num(chars[start..i].iter().collect()),
                loc,
            });
            continue;
        }
        if c == '"' {
            let (s, end) = scan_string(&chars, i).map_err(|(at, m)| (loc_at(at), m))?;
            i = end;
            tokens.push(Token {
                tok: Tok::Str(s),
                loc,
            });
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        if let Some(p) = PUNCTS.iter().find(|p| p.len() == 2 && **p == two) {
            tokens.push(Token {
                tok: Tok::Punct(p),
                loc,
            });
            i += 2;
            continue;
        }
        let one = c.to_string();
        if let Some(p) = PUNCTS.iter().find(|p| p.len() == 1 && **p == one) {
            tokens.push(Token {
                tok: Tok::Punct(p),
                loc,
            });
            i += 1;
            continue;
        }
        return Err((
            loc,
            format!("unexpected character `{}`", c.escape_default()),
        ));
    }
    if tokens.is_empty() {
        return Ok(None);
    }
    let end_col = raw
        .find(';')
        .map(|b| raw[..b].trim_end().chars().count())
        .unwrap_or_else(|| raw.trim_end().chars().count());
    Ok(Some(Line {
        loc: loc_at(0),
        end: loc_at(end_col),
        tokens,
    }))
}

/// Scan a number starting at `i`; returns the index after it. Accepts decimal integers, `0x`/`0b`
/// integers (with `_` separators), and decimal floats with optional fraction and exponent. The
/// parser validates the text; this only decides where the literal ends.
fn scan_number(chars: &[char], mut i: usize) -> usize {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    if at(i) == '0' && matches!(at(i + 1), 'x' | 'X' | 'b' | 'B') {
        i += 2;
        while at(i).is_ascii_alphanumeric() || at(i) == '_' {
            i += 1;
        }
        return i;
    }
    while at(i).is_ascii_digit() {
        i += 1;
    }
    if at(i) == '.' && !is_ident_start(at(i + 1)) {
        i += 1;
        while at(i).is_ascii_digit() {
            i += 1;
        }
    }
    if matches!(at(i), 'e' | 'E')
        && (at(i + 1).is_ascii_digit()
            || (matches!(at(i + 1), '+' | '-') && at(i + 2).is_ascii_digit()))
    {
        i += 2;
        while at(i).is_ascii_digit() {
            i += 1;
        }
    }
    // Trailing letters glued to a number (`12abc`) are kept in the token so the parser reports
    // the whole thing as one bad literal.
    while is_ident_char(at(i)) {
        i += 1;
    }
    i
}

fn scan_string(chars: &[char], start: usize) -> Result<(String, usize), (usize, String)> {
    let mut s = String::new();
    let mut i = start + 1;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err((start, "unterminated string literal".into()));
        };
        i += 1;
        match c {
            '"' => return Ok((s, i)),
            '\\' => {
                let Some(&e) = chars.get(i) else {
                    return Err((start, "unterminated string literal".into()));
                };
                i += 1;
                match e {
                    '\\' => s.push('\\'),
                    '"' => s.push('"'),
                    'n' => s.push('\n'),
                    't' => s.push('\t'),
                    'r' => s.push('\r'),
                    'x' => {
                        let hex: String = chars.get(i..i + 2).unwrap_or(&[]).iter().collect();
                        match u8::from_str_radix(&hex, 16) {
                            Ok(b) if hex.len() == 2 && b < 0x80 => s.push(b as char),
                            _ => {
                                return Err((
                                    i - 2,
                                    "`\\x` needs two hex digits below 80 (write other characters directly)"
                                        .into(),
                                ))
                            }
                        }
                        i += 2;
                    }
                    other => {
                        return Err((
                            i - 2,
                            format!("unknown escape `\\{}`", other.escape_default()),
                        ))
                    }
                }
            }
            c => s.push(c),
        }
    }
}

/// Quote a string so that [`lex_file`] reads it back unchanged.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut names = FileNames::default();
        let mut errs = Vec::new();
        let lines = lex_file("t", s, &mut names, &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        lines
            .into_iter()
            .flat_map(|l| l.tokens)
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn basic_tokens() {
        assert_eq!(
            toks("mov r0.xy, -c8[a0.x+2] ; hi"),
            vec![
                Tok::Ident("mov".into()),
                Tok::Ident("r0".into()),
                Tok::Punct("."),
                Tok::Ident("xy".into()),
                Tok::Punct(","),
                Tok::Punct("-"),
                Tok::Ident("c8".into()),
                Tok::Punct("["),
                Tok::Ident("a0".into()),
                Tok::Punct("."),
                Tok::Ident("x".into()),
                Tok::Punct("+"),
                Tok::Num("2".into()),
                Tok::Punct("]"),
            ]
        );
        assert_eq!(
            toks("(1.5e-3, .5, 0x1F, 2.)"),
            vec![
                Tok::Punct("("),
                Tok::Num("1.5e-3".into()),
                Tok::Punct(","),
                Tok::Num(".5".into()),
                Tok::Punct(","),
                Tok::Num("0x1F".into()),
                Tok::Punct(","),
                Tok::Num("2.".into()),
                Tok::Punct(")"),
            ]
        );
        assert_eq!(
            toks("cmp.x && !cmp.y"),
            vec![
                Tok::Ident("cmp".into()),
                Tok::Punct("."),
                Tok::Ident("x".into()),
                Tok::Punct("&&"),
                Tok::Punct("!"),
                Tok::Ident("cmp".into()),
                Tok::Punct("."),
                Tok::Ident("y".into()),
            ]
        );
    }

    #[test]
    fn strings_and_quote() {
        let s = "a;b\"c\\d\u{1}é";
        assert_eq!(toks(&quote(s)), vec![Tok::Str(s.into())]);
    }

    #[test]
    fn line_markers() {
        let mut names = FileNames::default();
        let mut errs = Vec::new();
        let lines = lex_file("a", "x\n# 10 \"b.vsh\" 1\ny\nz", &mut names, &mut errs);
        assert!(errs.is_empty());
        assert_eq!(lines[0].loc.line, 1);
        assert_eq!(names.name(lines[1].loc.file), "b.vsh");
        assert_eq!(lines[1].loc.line, 10);
        assert_eq!(lines[2].loc.line, 11);
    }
}
