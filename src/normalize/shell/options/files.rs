//! Option tables of the file, text and search tools the default policy allows (coreutils,
//! grep, ripgrep, find, tree, jq, …), and the checks of their operands that a table cannot say.

use super::{Effect, Finding, Parsed};
use crate::normalize::shell::words::WordValue;

/// `ls`.
pub const LS: &str = r#"
-a --all
-A --almost-all
--author
-b --escape
--block-size =
-B --ignore-backups
-c
-C
--color =?
-d --directory
-D --dired
-f
-F --classify =?
--file-type
--format =
--full-time
-g
--group-directories-first
-G --no-group
-h --human-readable
--si
-H --dereference-command-line
--dereference-command-line-symlink-to-dir
--hide =
--hyperlink =?
--indicator-style =
-i --inode
-I --ignore =
-k --kibibytes
-l
-L --dereference
-m
-n --numeric-uid-gid
-N --literal
-o
-p
-q --hide-control-chars
--show-control-chars
-Q --quote-name
--quoting-style =
-r --reverse
-R --recursive
-s --size
-S
--sort =
--time =
--time-style =
-t
-T --tabsize =
-u
-U
-v
-w --width =
-x
-X
-Z --context
--zero
-1
--help
--version
"#;

/// `cat`.
pub const CAT: &str = r#"
-A --show-all
-b --number-nonblank
-e
-E --show-ends
-n --number
-s --squeeze-blank
-t
-T --show-tabs
-u
-v --show-nonprinting
--help
--version
"#;

/// `head`.
pub const HEAD: &str = r#"
-c --bytes =
-n --lines =
-q --quiet --silent
-v --verbose
-z --zero-terminated
-NUM
--help
--version
"#;

/// `tail`.
pub const TAIL: &str = r#"
-c --bytes =
-f --follow =?
-F
-n --lines =
--max-unchanged-stats =
--pid =
-q --quiet --silent
--retry
-s --sleep-interval =
-v --verbose
-z --zero-terminated
-NUM
--help
--version
"#;

/// `wc`.
pub const WC: &str = r#"
-c --bytes
-m --chars
-l --lines
--files0-from = reads-listed
-L --max-line-length
-w --words
--total =
--help
--version
"#;

/// `sort`.
pub const SORT: &str = r#"
-b --ignore-leading-blanks
-d --dictionary-order
-f --ignore-case
-g --general-numeric-sort
-i --ignore-nonprinting
-M --month-sort
-h --human-numeric-sort
-n --numeric-sort
-R --random-sort
--random-source = read
-r --reverse
--sort =
-V --version-sort
--batch-size =
-c --check =?
-C
--compress-program = program: runs that program to compress temporary files
--debug
--files0-from = reads-listed
-k --key =
-m --merge
-o --output = write
-s --stable
-S --buffer-size =
-t --field-separator =
-T --temporary-directory = write-tree: makes its temporary files there
--parallel =
-u --unique
-z --zero-terminated
--help
--version
"#;

/// `uniq` (its second operand is a file it writes: see [`uniq`]).
pub const UNIQ: &str = r#"
-c --count
-d --repeated
-D
--all-repeated =?
-f --skip-fields =
--group =?
-i --ignore-case
-s --skip-chars =
-u --unique
-z --zero-terminated
-w --check-chars =
-NUM
--help
--version
"#;

/// `cut`.
pub const CUT: &str = r#"
-b --bytes =
-c --characters =
-d --delimiter =
-f --fields =
-n
--complement
-s --only-delimited
--output-delimiter =
-z --zero-terminated
--help
--version
"#;

/// `diff` (GNU diffutils).
pub const DIFF: &str = r#"
--normal
-q --brief
-s --report-identical-files
-c
-C --context =?
-u
-U --unified =?
-e --ed
-n --rcs
-y --side-by-side
-W --width =
--left-column
--suppress-common-lines
-p --show-c-function
-F --show-function-line =
--label =
-t --expand-tabs
-T --initial-tab
--tabsize =
--suppress-blank-empty
-l --paginate
-r --recursive
--no-dereference
-N --new-file
--unidirectional-new-file
--ignore-file-name-case
--no-ignore-file-name-case
-x --exclude =
-X --exclude-from = read
-S --starting-file =
--from-file = read
--to-file = read
-i --ignore-case
-E --ignore-tab-expansion
-Z --ignore-trailing-space
-b --ignore-space-change
-w --ignore-all-space
-B --ignore-blank-lines
-I --ignore-matching-lines =
-a --text
--strip-trailing-cr
-D --ifdef =
--GTYPE-group-format =
--old-group-format =
--new-group-format =
--unchanged-group-format =
--changed-group-format =
--line-format =
--old-line-format =
--new-line-format =
--unchanged-line-format =
-d --minimal
--horizon-lines =
--speed-large-files
--color =?
--palette =
--no-index
--help
-v --version
"#;

/// `stat`.
pub const STAT: &str = r#"
-L --dereference
-f --file-system
--cached =
-c --format =
--printf =
-t --terse
--help
--version
"#;

/// `du`.
pub const DU: &str = r#"
-0 --null
-a --all
--apparent-size
-B --block-size =
-b --bytes
-c --total
-D --dereference-args
-d --max-depth =
--files0-from = reads-listed
-H
--inodes
-h --human-readable
-k
-L --dereference
-l --count-links
-m
-P --no-dereference
-S --separate-dirs
--si
-s --summarize
-t --threshold =
--time =?
--time-style =
-X --exclude-from = read
--exclude =
-x --one-file-system
--help
--version
"#;

/// `file`.
pub const FILE: &str = r#"
-b --brief
-c --checking-printout
-C --compile changes: writes a compiled magic file
-d --debug
-E
-e --exclude =
--exclude-quiet =
--extension
-F --separator =
-f --files-from = reads-listed
-h --no-dereference
-i --mime
--mime-type
--mime-encoding
-k --keep-going
-l --list
-L --dereference
-m --magic-file = read
-N --no-pad
-n --no-buffer
-p --preserve-date
-P --parameter =
-r --raw
-s --special-files
-S --no-sandbox
-z --uncompress spawns: runs decompression programs
-Z --uncompress-noreport spawns: runs decompression programs
-0 --print0
--apple
--help
-v --version
"#;

/// `echo` (the shell builtin and coreutils).
pub const ECHO: &str = r#"
-n
-e
-E
"#;

/// `printf` (`-v` sets a shell variable: see [`printf`]).
pub const PRINTF: &str = r#"
-v =
"#;

/// `which`.
pub const WHICH: &str = r#"
-a --all
-s
--skip-alias
--skip-functions
--skip-dot
--skip-tilde
--show-dot
--show-tilde
--read-alias
--read-functions
-i
--tty-only
--help
-v -V --version
"#;

/// `date` (an operand that does not start with `+` sets the clock: see [`date`]).
pub const DATE: &str = r#"
-d --date =
--debug
-f --file = read
-I --iso-8601 =?
--resolution
-R --rfc-email
--rfc-3339 =
-r --reference = read
-s --set = changes: sets the system clock
-u --utc --universal
--help
--version
"#;

/// `uname`.
pub const UNAME: &str = r#"
-a --all
-s --kernel-name
-n --nodename
-r --kernel-release
-v --kernel-version
-m --machine
-p --processor
-i --hardware-platform
-o --operating-system
--help
--version
"#;

/// `basename`.
pub const BASENAME: &str = r#"
-a --multiple
-s --suffix =
-z --zero
--help
--version
"#;

/// `dirname`.
pub const DIRNAME: &str = r#"
-z --zero
--help
--version
"#;

/// `realpath`.
pub const REALPATH: &str = r#"
-e --canonicalize-existing
-m --canonicalize-missing
-L --logical
-P --physical
-q --quiet
--relative-to = read
--relative-base = read
-s --strip --no-symlinks
-z --zero
--help
--version
"#;

/// `cd` (the shell builtin).
pub const CD: &str = r#"
-L
-P
-e
-@
"#;

/// `grep` (GNU).
pub const GREP: &str = r#"
-E --extended-regexp
-F --fixed-strings
-G --basic-regexp
-P --perl-regexp
-e --regexp =
-f --file = read
-i --ignore-case
--no-ignore-case
-y
-v --invert-match
-w --word-regexp
-x --line-regexp
-c --count
--color --colour =?
-L --files-without-match
-l --files-with-matches
-m --max-count =
-o --only-matching
-q --quiet --silent
-s --no-messages
-b --byte-offset
-H --with-filename
-h --no-filename
--label =
-n --line-number
-T --initial-tab
-u --unix-byte-offsets
-Z --null
-z --null-data
-A --after-context =
-B --before-context =
-C --context =
-NUM
--group-separator =
--no-group-separator
-a --text
--binary-files =
-D --devices =
-d --directories =
--exclude =
--exclude-from = read
--exclude-dir =
--include =
-r --recursive
-R --dereference-recursive
--line-buffered
-U --binary
--help
-V --version
"#;

/// `rg` (ripgrep 14).
pub const RG: &str = r#"
-e --regexp =
-f --file = read
--pre = program: runs a program on every file it searches
--pre-glob =
-z --search-zip spawns: runs decompression programs on compressed files
--no-search-zip
--hostname-bin = program: runs a program to learn the host name
--ignore-file = read
--ignore-file-case-insensitive
--no-ignore-file-case-insensitive
-A --after-context =
-B --before-context =
-C --context =
--context-separator =
--no-context-separator
--field-context-separator =
--field-match-separator =
--path-separator =
-0 --null
--null-data
--line-buffered
--no-line-buffered
--block-buffered
--no-block-buffered
-b --byte-offset
--no-byte-offset
--column
--no-column
-c --count
--count-matches
--color =
--colors =
--crlf
--no-crlf
--debug
--trace
--dfa-size-limit =
-E --encoding =
--no-encoding
--engine =
-F --fixed-strings
--no-fixed-strings
-L --follow
--no-follow
--files
-l --files-with-matches
--files-without-match
-g --glob =
--glob-case-insensitive
--no-glob-case-insensitive
--iglob =
--heading
--no-heading
-H --with-filename
-I --no-filename
-. --hidden
--no-hidden
-i --ignore-case
-S --smart-case
-s --case-sensitive
--include-zero
--no-include-zero
-v --invert-match
--no-invert-match
--json
--no-json
-x --line-regexp
-n --line-number
-N --no-line-number
-M --max-columns =
--max-columns-preview
--no-max-columns-preview
-m --max-count =
-d --max-depth --maxdepth =
--max-filesize =
--mmap
--no-mmap
-U --multiline
--no-multiline
--multiline-dotall
--no-multiline-dotall
--no-config
--no-ignore
--ignore
--no-ignore-dot
--ignore-dot
--no-ignore-exclude
--ignore-exclude
--no-ignore-files
--ignore-files
--no-ignore-global
--ignore-global
--no-ignore-messages
--ignore-messages
--no-ignore-parent
--ignore-parent
--no-ignore-vcs
--ignore-vcs
--no-messages
--messages
--no-require-git
--require-git
--no-unicode
--unicode
-o --only-matching
--passthru --passthrough
-P --pcre2
--no-pcre2
--auto-hybrid-regex
--no-auto-hybrid-regex
--pcre2-version
-p --pretty
-q --quiet
--regex-size-limit =
-r --replace =
-a --text
--no-text
-j --threads =
--trim
--no-trim
-t --type =
-T --type-not =
--type-add =
--type-clear =
--type-list
-u --unrestricted
-V --version
--vimgrep
-w --word-regexp
--stats
--no-stats
--sort =
--sortr =
--sort-files
--no-sort-files
--one-file-system
--no-one-file-system
--binary
--no-binary
--hyperlink-format =
--stop-on-nonmatch
--generate =
-h --help
"#;

/// `find` (GNU findutils): global options, tests and actions. `-exec`, `-execdir`, `-ok` and
/// `-okdir` run a command that is judged on its own (the walker's `find_exec`).
pub const FIND: &str = r#"
-H
-L
-P
-D =
-O0 -O1 -O2 -O3
-d -depth
-maxdepth =
-mindepth =
-mount -xdev
-noleaf
-ignore_readdir_race
-noignore_readdir_race
-daystart
-follow
-regextype =
-warn
-nowarn
-files0-from = reads-listed
-help --help
-version --version
-amin =
-anewer = read
-atime =
-cmin =
-cnewer = read
-ctime =
-empty
-executable
-false
-fstype =
-gid =
-group =
-ilname =
-iname =
-inum =
-ipath =
-iregex =
-iwholename =
-links =
-lname =
-mmin =
-mtime =
-name =
-newer = read
-newer* =
-nogroup
-nouser
-path =
-perm =
-readable
-regex =
-samefile = read
-size =
-true
-type =
-uid =
-used =
-user =
-wholename =
-writable
-xtype =
-context =
-not
-a -and
-o -or
-delete changes: deletes every file it selects
-exec
-execdir
-ok
-okdir
-fls = write
-fprint = write
-fprint0 = write
-fprintf =2 write@1: writes its first value (the second is a format)
-ls
-print
-print0
-printf =
-prune
-quit
"#;

/// `tree`.
pub const TREE: &str = r#"
-a
-d
-l
-f
-x
-L =
-R changes: with -H, writes an index file into every directory
-P =
-I =
--gitignore
--gitfile = read
--ignore-case
--matchdirs
--metafirst
--prune
--info
--infofile = read
--noreport
--charset =
--filelimit =
--timefmt =
-o = write
-q
-N
-Q
-p
-u
-g
-s
-h
--si
--du
-D
-F
--inodes
--device
-v
-t
-c
-U
-r
--dirsfirst
--filesfirst
--sort =
-i
-A
-S
-n
-C
-X
-J
-H =
-T =
--nolinks
--hintro = read
--houtro = read
--fromfile changes: reads the listing from files instead of the disk
--fromtabfile changes: reads the listing from files instead of the disk
--fflinks
--help
--version
"#;

/// `jq` (a filter that reads `env` or `$ENV` prints the environment: see [`jq`]).
pub const JQ: &str = r#"
-n --null-input
-R --raw-input
-s --slurp
-c --compact-output
-r --raw-output
--raw-output0
-j --join-output
-a --ascii-output
-S --sort-keys
-C --color-output
-M --monochrome-output
--tab
--indent =
--unbuffered
--stream
--stream-errors
--seq
-f --from-file = read
-L = read-tree: loads modules from that directory
-e --exit-status
--arg =2
--argjson =2
--slurpfile =2 read@2: reads its second value (the first is a variable name)
--rawfile =2 read@2: reads its second value (the first is a variable name)
--args
--jsonargs
--binary -b
--debug-dump-disasm
--debug-trace
-h --help
-V --version
--build-configuration
"#;

/// `date MMDDhhmm…`: an operand that is not a `+FORMAT` sets the system clock.
pub fn date(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    for w in &p.operands {
        if !w.text.starts_with('+') {
            out.push(
                Finding::new(&w.text, &w.text, Effect::Changes, Some((*w).clone()))
                    .because("sets the system clock"),
            );
        }
    }
}

/// `uniq IN OUT`: the second operand is a file it writes.
pub fn uniq(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    if let Some(w) = p.operands.get(1) {
        out.push(Finding::new(
            &w.text,
            "OUTPUT",
            Effect::Write,
            Some((*w).clone()),
        ));
    }
}

/// `printf -v NAME`: assigning a variable that changes what later commands run.
pub fn printf(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    for v in p.values("-v") {
        if super::env::changes_what_runs(&v.text) || v.dynamic.is_some() {
            out.push(
                Finding::new("-v", "-v", Effect::Config, Some(v.clone())).because(&format!(
                    "sets {}, which changes what later commands run",
                    v.text
                )),
            );
        }
    }
}

/// A jq filter that reads the environment (`env`, `$ENV`) prints its secrets.
pub fn jq(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    // The filter is the first operand, unless it comes from a file (`-f`).
    if p.has("-f") {
        return;
    }
    let Some(filter) = p.operands.first() else {
        return;
    };
    if reads_env(&filter.text) {
        out.push(
            Finding::new(&filter.text, "env", Effect::Env, Some((*filter).clone()))
                .because("reads the environment (`env`, `$ENV`), secrets included"),
        );
    }
}

/// Whether a jq program mentions `env` as a function or `$ENV` (outside string literals the
/// tokens are the same; inside one they are harmless, but a string can also be interpolated
/// with `\(env)`, so strings are not skipped).
fn reads_env(filter: &str) -> bool {
    let bytes = filter.as_bytes();
    let word = |i: usize, len: usize| {
        let before = i.checked_sub(1).map(|k| bytes[k]);
        let after = bytes.get(i + len).copied();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        !before.is_some_and(|b| ident(b) || b == b'.') && !after.is_some_and(ident)
    };
    filter.contains("$ENV")
        || filter.contains("$__prog_name")
        || filter
            .match_indices("env")
            .any(|(i, _)| word(i, 3) && !filter[..i].ends_with('$'))
}

/// `--fix` and its kind (and a test runner's `-u`, which rewrites snapshots) rewrite the files a linter is given (the working directory when none
/// are): writes, judged like any other, rather than an effect a rule must name.
pub fn fixes_write_operands(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    const FIXES: &[&str] = &["--fix", "--unsafe-fixes", "--fix-only", "--add-noqa", "-u"];
    if !out.iter().any(|f| FIXES.contains(&f.name.as_str())) {
        return;
    }
    out.retain(|f| !FIXES.contains(&f.name.as_str()));
    let dot = WordValue::literal(".");
    let targets: Vec<&WordValue> = if p.operands.is_empty() {
        vec![&dot]
    } else {
        p.operands.clone()
    };
    for t in targets {
        out.push(Finding::new(
            &t.text,
            "--fix",
            Effect::Write,
            Some(t.clone()),
        ));
    }
}

/// `sed` (`sed -n 1,5p FILE` is Codex's safe example): `-i` writes its files, which the effects
/// table already judges as writes; a script is read by [`sed`], and `-f` runs a script file
/// guardian cannot read.
pub const SED: &str = r#"
-n --quiet --silent
-e --expression =
-f --file = program: runs the sed script in that file
-i --in-place =?
-E -r --regexp-extended
-s --separate
-z --null-data
-u --unbuffered
-l --line-length =
--posix
--sandbox
--debug
--follow-symlinks
--help
--version
"#;
/// `nl` (GNU): numbers lines; no option writes or reads a file.
pub const NL: &str = r#"
-b --body-numbering =
-d --section-delimiter =
-f --footer-numbering =
-h --header-numbering =
-i --line-increment =
-l --join-blank-lines =
-n --number-format =
-p --no-renumber
-s --number-separator =
-v --starting-line-number =
-w --number-width =
--help
--version
"#;

/// `tac` (GNU).
pub const TAC: &str = r#"
-b --before
-r --regex
-s --separator =
--help
--version
"#;

/// `numfmt` (GNU): its operands are numbers, not files.
pub const NUMFMT: &str = r#"
--debug
-d --delimiter =
--field =
--format =
--from =
--from-unit =
--grouping
--header =?
--invalid =
--padding =
--round =
--suffix =
--to =
--to-unit =
-z --zero-terminated
--help
--version
"#;

/// `base64` (GNU coreutils; BSD's `-o FILE`/`-i FILE` are not in it, so they are unknown).
pub const BASE64: &str = r#"
-d --decode
-i --ignore-garbage
-w --wrap =
--help
--version
"#;

/// `sed`: a script may only print, delete, substitute and move lines; a command that writes a
/// file (`w`, `W`, `s///w`), runs one (`e`, `s///e`) or reads one (`r`, `R`) is not one a rule
/// names, and neither is anything this reader does not know.
pub fn sed(p: &Parsed<'_>, out: &mut Vec<Finding>) {
    let scripts: Vec<&WordValue> = if p.has("-e") {
        p.values("-e").collect()
    } else if p.has("-f") {
        Vec::new()
    } else {
        p.operands.first().copied().into_iter().collect()
    };
    for s in scripts {
        if s.dynamic.is_some() || !sed_script_is_plain(&s.text) {
            out.push(
                Finding::new(&s.text, "SCRIPT", Effect::Unknown, Some(s.clone())).because(
                    "is a sed script guardian does not know to only print, delete or substitute lines (`w`, `e` and `r` write, run and read files)",
                ),
            );
        }
    }
}

/// Whether a sed script uses only commands that change nothing but its output: addresses
/// (`N`, `$`, `/re/`, ranges, `!`), `p d = q Q n N P D h H g G x l z`, `{ }`, and `s`/`y` without
/// the `w` and `e` flags.
fn sed_script_is_plain(script: &str) -> bool {
    let c: Vec<char> = script.chars().collect();
    let mut i = 0;
    // Up to the next unescaped `delim`; returns the index after it.
    let until = |mut i: usize, delim: char| -> Option<usize> {
        while i < c.len() {
            match c[i] {
                '\\' => i += 2,
                ch if ch == delim => return Some(i + 1),
                '\n' => return None,
                _ => i += 1,
            }
        }
        None
    };
    let mut any = false;
    while i < c.len() {
        while i < c.len() && (c[i].is_whitespace() || c[i] == ';') {
            i += 1;
        }
        if i >= c.len() {
            break;
        }
        // Addresses: `N`, `$`, `/re/`, then `,ADDR`, then `!`.
        for second in [false, true] {
            if second {
                if c.get(i) != Some(&',') {
                    break;
                }
                i += 1;
            }
            match c.get(i) {
                Some(d) if d.is_ascii_digit() => {
                    while c.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                }
                Some('$') => i += 1,
                Some('/') => match until(i + 1, '/') {
                    Some(k) => i = k,
                    None => return false,
                },
                _ if second => return false,
                _ => {}
            }
        }
        while c.get(i).is_some_and(|ch| ch.is_whitespace() || *ch == '!') {
            i += 1;
        }
        let Some(&cmd) = c.get(i) else {
            return false;
        };
        i += 1;
        match cmd {
            'p' | 'd' | '=' | 'n' | 'N' | 'P' | 'D' | 'h' | 'H' | 'g' | 'G' | 'x' | 'l' | 'z'
            | '{' | '}' => {}
            'q' | 'Q' => {
                while c.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&delim) = c.get(i) else {
                    return false;
                };
                if delim == '\\' || delim == '\n' {
                    return false;
                }
                let Some(k) = until(i + 1, delim).and_then(|k| until(k, delim)) else {
                    return false;
                };
                i = k;
                while let Some(&f) = c.get(i) {
                    match f {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                        d if d.is_ascii_digit() && cmd == 's' => i += 1,
                        ';' | '\n' | '}' => break,
                        w if w.is_whitespace() => i += 1,
                        // `w FILE`, `e`, anything else.
                        _ => return false,
                    }
                }
            }
            _ => return false,
        }
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::reads_env;

    #[test]
    fn jq_filters_that_read_the_environment() {
        for f in [
            "env",
            "env.HOME",
            "$ENV.AWS_SECRET_ACCESS_KEY",
            "[env[]]",
            "\"\\(env.X)\"",
            "{a: env}",
        ] {
            assert!(reads_env(f), "{f}");
        }
        for f in [
            ".environment",
            ".env",
            ".[] | .name",
            "map(.envoy)",
            "$foo",
            ".x.env",
        ] {
            assert!(!reads_env(f), "{f}");
        }
    }
}
