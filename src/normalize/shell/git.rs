//! git's command line, read once for everyone: its global options (`-C dir`, `-c k=v`,
//! `--no-pager`, …), the subcommand, and the subcommand's words. The walker (`git
//! submodule foreach`, deny texts without global options), the effects table (files and hosts) and
//! the risk signals (`crate::signals`) all read git's words through [`split`].

/// git's global options that take the next word as their value (`-C dir`, `-c k=v`, …).
pub const GIT_OPTIONS_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
    "--config-env",
];

/// The words after `git`, taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitWords<'a, T> {
    /// The global options and their values.
    pub globals: &'a [T],
    /// The subcommand, if there is one.
    pub sub: Option<&'a T>,
    /// The subcommand's words.
    pub rest: &'a [T],
}

impl<'a, T: AsRef<str>> GitWords<'a, T> {
    /// The global options with their values: (`-c`, `core.pager=x`), (`--no-pager`, None).
    pub fn global_options(&self) -> Vec<(&'a str, Option<&'a str>)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.globals.len() {
            let o = self.globals[i].as_ref();
            if GIT_OPTIONS_WITH_VALUE.contains(&o) {
                out.push((o, self.globals.get(i + 1).map(AsRef::as_ref)));
                i += 2;
            } else {
                out.push((o, None));
                i += 1;
            }
        }
        out
    }
}

/// Takes apart the words after `git`.
pub fn split<T: AsRef<str>>(args: &[T]) -> GitWords<'_, T> {
    let n = git_global_options_len(args.iter().map(AsRef::as_ref)).min(args.len());
    GitWords {
        globals: &args[..n],
        sub: args.get(n),
        rest: args.get(n + 1..).unwrap_or(&[]),
    }
}

/// How many of the words after `git` are its global options and their values: the subcommand
/// is the next word (`git -C dir --no-pager push` → 3).
pub fn git_global_options_len<'a>(args: impl IntoIterator<Item = &'a str>) -> usize {
    let mut args = args.into_iter();
    let mut n = 0;
    while let Some(a) = args.next() {
        if GIT_OPTIONS_WITH_VALUE.contains(&a) {
            n += 1 + usize::from(args.next().is_some());
        } else if a.starts_with('-') {
            n += 1;
        } else {
            break;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globals_subcommand_and_rest() {
        let w = [
            "-C",
            "sub",
            "--no-pager",
            "-c",
            "a=b",
            "push",
            "-f",
            "origin",
        ];
        let g = split(&w);
        assert_eq!(g.globals.len(), 5);
        assert_eq!(g.sub, Some(&"push"));
        assert_eq!(g.rest, &["-f", "origin"]);
        assert_eq!(
            g.global_options(),
            vec![
                ("-C", Some("sub")),
                ("--no-pager", None),
                ("-c", Some("a=b"))
            ]
        );
        let none: [&str; 1] = ["--version"];
        assert_eq!(split(&none).sub, None);
        assert!(split(&none).rest.is_empty());
    }
}
